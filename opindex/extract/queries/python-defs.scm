; Definitions. Each pattern ends with its role capture; the other captures are named role.part.
; The extractor nests them by byte ranges (scopes are class and def bodies), so no pattern needs a parent.

(class_definition
  name: (identifier) @class.name
  superclasses: (argument_list)? @class.bases
  body: (block) @class.body) @class

(function_definition
  name: (identifier) @def.name
  parameters: (parameters) @def.params
  body: (block) @def.body) @def

; @register_decomposition(aten.x), @register_decomposition([aten.x.default, aten.y.out]), @register_meta(...)
(decorated_definition
  (decorator
    (call
      function: [(identifier) (attribute)] @register.func
      arguments: (argument_list . (_) @register.ops)))
  (#match? @register.func "(^|[.])(register_decomposition|register_meta)$")
  definition: (function_definition) @register.def) @register

; Module-level calls of the helpers that register a decomposition or meta function for an op as they make it:
; register_inplace(aten.x_, aten.x), _create_binary_float_meta_func(aten.x), x_ = _make_inplace(x),
; x_copy = _make_copy_from_view(aten.x)
(module
  (expression_statement
    [(call
       function: (identifier) @helper.func
       arguments: (argument_list . (_) @helper.first))
     (assignment
       left: (identifier) @helper.target
       right: (call
         function: (identifier) @helper.func
         arguments: (argument_list . (_) @helper.first)))] @helper)
  (#any-of? @helper.func "register_inplace" "_create_binary_float_meta_func" "_make_inplace" "_make_copy_from_view"))

; activate_meta's own exclusions (torch/_meta_registrations.py): `elif op_overload.name() in {"aten::clone", ...}:
; pass` keeps the C++ kernel of the ops it names (the test may be in parentheses: `elif (\n op_overload.name() ...)`)
; (`_` with these two fields: an if_statement or an elif_clause, the only Python nodes that have both)
((_
    condition: [
      (comparison_operator
        (call function: (attribute attribute: (identifier) @skip.method))
        operators: "in"
        [(set) (list) (tuple)] @skip.names)
      (parenthesized_expression
        (comparison_operator
          (call function: (attribute attribute: (identifier) @skip.method))
          operators: "in"
          [(set) (list) (tuple)] @skip.names))]
    consequence: (block . (pass_statement) .)) @skip
  (#eq? @skip.method "name"))
