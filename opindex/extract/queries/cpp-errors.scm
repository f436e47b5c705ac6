; Parse errors, counted into files.parse_errors.
(ERROR) @error
(MISSING) @error
