"""The main screen's widgets: header, filter bar, rank table, findings panel."""
