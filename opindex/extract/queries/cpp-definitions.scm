; C++/CUDA definitions (with a body; declarations are not definitions). Each pattern's role (#set! role) is also
; the capture of the whole definition; the other captures are named role.part. Scopes (namespaces, classes) come
; from the definition's ancestors.

; A function or method: `Tensor relu(...) {`, `void Foo::bar() const {`, `__global__ void k(...) {`.
; A structured kernel parses as a function declarator around a call-like declarator:
; `TORCH_IMPL_FUNC(add_out)(const Tensor& self) {` -> the name capture is then itself a function_declarator.
((function_definition
  declarator: (function_declarator
    declarator: (_) @function.name
    parameters: (parameter_list) @function.params)
  body: (_)) @function
 (#set! role "function"))

; The same behind a returned reference or pointer: `Tensor& add_out(...) {`, `float* data(...) {`.
((function_definition
  declarator: (reference_declarator
    (function_declarator
      declarator: (_) @function.name
      parameters: (parameter_list) @function.params))
  body: (_)) @function
 (#set! role "function"))

((function_definition
  declarator: (pointer_declarator
    declarator: (function_declarator
      declarator: (_) @function.name
      parameters: (parameter_list) @function.params))
  body: (_)) @function
 (#set! role "function"))

((class_specifier
  name: (_) @class.name
  body: (field_declaration_list)) @class
 (#set! role "class"))

((struct_specifier
  name: (_) @struct.name
  body: (field_declaration_list)) @struct
 (#set! role "struct"))
