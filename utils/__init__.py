"""Library code of the polyglot harness; see ../shared/STYLE.md for the data flow."""
