"""The prose checked against the data: claims and answers defined by name beside their
experiment (claims.toml, answers.toml), their expression language, their evaluation
and intervals, the branches of prose they choose, and the verdicts of two runs."""
