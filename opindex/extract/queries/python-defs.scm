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
