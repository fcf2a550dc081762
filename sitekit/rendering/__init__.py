"""From site_data to a page: the data as pages read it, the markers and the cells they
render, the one escaping path for text from the data, formulas, and notebook outputs."""
