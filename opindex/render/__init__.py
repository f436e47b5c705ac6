"""render: plain data in, text out (tables, JSON, CSV, ...). Nothing here reads the database."""
