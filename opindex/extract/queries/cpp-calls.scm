; Call sites. The callee splits by the shape of the function expression, and each shape is a role (#set! role):
; bare `f(...)`, qualified `at::native::f(...)`, templated `f<T>(...)`, method `obj.f(...)` / `obj->f(...)`.
; The call node itself is not captured (330k calls in a tree: every captured node costs): it starts where its
; function expression starts. The argument list is captured where a stub call can be (no receiver).

((call_expression
  function: (identifier) @call.name
  arguments: (argument_list) @call.args)
 (#set! role "call.bare"))

((call_expression
  function: (qualified_identifier) @call.qualified
  arguments: (argument_list))
 (#set! role "call.qualified"))

((call_expression
  function: (template_function
    name: (_) @call.name
    arguments: (template_argument_list) @call.template_args)
  arguments: (argument_list) @call.args)
 (#set! role "call.template"))

; `f<T>(MACRO(T));` in a body parses as a declaration (C++'s most vexing parse: the argument looks like a declarator);
; it is a call. A real declaration of that shape, `T<x> (name);`, is vanishingly rare.
((declaration
  type: (template_type
    name: (type_identifier) @call.name
    arguments: (template_argument_list) @call.template_args)
  declarator: (parenthesized_declarator) @call.args)
 (#set! role "call.template"))

((call_expression
  function: (field_expression
    argument: (_) @call.receiver
    field: (_) @call.name)
  arguments: (argument_list))
 (#set! role "call.method"))

; A local object of a class template built with arguments: `AddFunctor<scalar_t> f(alpha_scalar.to<scalar_t>());`
; (1.8's add_kernel_cuda, then gpu_kernel_with_scalars(iter, f)): a call of its constructor, so the class it builds
; is linked like `AddFunctor<scalar_t>(alpha)` would be (a functor object built for a launcher is the op's body).
((declaration
  type: (template_type
    name: (type_identifier) @call.name
    arguments: (template_argument_list) @call.template_args)
  declarator: (init_declarator
    declarator: (identifier)
    value: [(argument_list) (initializer_list)] @call.args))
 (#set! role "call.declared"))

; A call of a temporary object: `UniqueCub<scalar_t>{}(*self_c, ...)`, `sum_functor<T>{}(iter)`: its class's
; operator(), extracted as the qualified call `UniqueCub::operator()`.
((call_expression
  function: (compound_literal_expression
    type: [(type_identifier) (template_type) (qualified_identifier)] @call.object)
  arguments: (argument_list) @call.args)
 (#set! role "call.object"))

; The same with a temporary made by `()`: `cuda_scatter_gather_base_kernel<>()(self, dim, ...)` (gather_cuda_kernel):
; the inner call builds the object (it must have no arguments: `f(x)(y)` calls what f returns).
((call_expression
  function: (call_expression
    function: [(template_function) (identifier) (qualified_identifier)] @call.object
    arguments: (argument_list) @call.inner)
  arguments: (argument_list) @call.args)
 (#set! role "call.object"))

; A CUDA launch: `kernel<T><<<grid, block, smem, stream>>>(args)` (tree-sitter-cuda's kernel_call_syntax). Only the
; <<<>>> is matched; the extractor takes the call around it and its function: a pattern at every call_expression
; that waits for a kernel_call_syntax child made the walk of every C++ tree ~3% longer for 700 launches.
((kernel_call_syntax) @launch.config
 (#set! role "launch"))
