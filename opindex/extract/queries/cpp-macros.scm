; #define directives: object-like and function-like. The body (preproc_arg) is absent for `#define X`.
((preproc_def
  name: (identifier) @macro.name
  value: (preproc_arg)? @macro.body) @macro
 (#set! role "macro"))

((preproc_function_def
  name: (identifier) @macro.name
  parameters: (preproc_params) @macro.params
  value: (preproc_arg)? @macro.body) @macro
 (#set! role "macro"))
