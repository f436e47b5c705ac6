; Parse errors, counted into files.parse_errors.
((ERROR) @error (#set! role "error"))
((MISSING) @error (#set! role "error"))
