; Call sites. The callee splits by the shape of the function expression:
; bare `f(...)`, qualified `at::native::f(...)`, templated `f<T>(...)`, method `obj.f(...)` / `obj->f(...)`.

(call_expression
  function: (identifier) @call.name
  arguments: (argument_list) @call.args) @call

(call_expression
  function: (qualified_identifier) @call.qualified
  arguments: (argument_list) @call.args) @call

(call_expression
  function: (template_function
    name: (_) @call.name
    arguments: (template_argument_list) @call.template_args)
  arguments: (argument_list) @call.args) @call

(call_expression
  function: (field_expression
    argument: (_) @call.receiver
    field: (_) @call.name)
  arguments: (argument_list) @call.args) @call

; A CUDA launch: `kernel<T><<<grid, block, smem, stream>>>(args)` (tree-sitter-cuda's kernel_call_syntax).
(call_expression
  function: (_) @launch.kernel
  (kernel_call_syntax) @launch.config) @launch
