"""The editions' words and numbers: the catalogs of generated texts (gettext), numbers
written in the page's locale, numbers typed by a person, the calculator's locale, a
variant's status in words, and the record of which English text each edition follows."""
