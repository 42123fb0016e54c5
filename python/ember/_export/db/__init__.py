"""ember._export.db: the exportdb examples' support tags (``case.SupportLevel``)."""
