; Names a module binds: imports, `name = dotted.path` aliases, `name = _add_docstr(dotted.path, doc)`, __all__.

(import_statement
  name: [(dotted_name) @import.module
         (aliased_import name: (dotted_name) @import.module alias: (identifier) @import.alias)]) @import

(import_from_statement
  module_name: (_) @from.module
  name: [(dotted_name) @from.name
         (aliased_import name: (dotted_name) @from.name alias: (identifier) @from.alias)]) @from

(import_from_statement
  module_name: (_) @star.module
  (wildcard_import)) @star

; Aliases and __all__ are read from the module's own statements (not from inside if/try blocks or defs): the
; patterns match such statements anywhere, and the extractor keeps those whose parent is the module (a pattern
; anchored at the module keeps its states alive over the whole walk: it made the walk of every file ~15% longer).
; The first also finds `func = _fused_adamw` in a block (a def's), then `func(...)`: a call of what the name holds
; (python.py keeps those as the funcvar role).
((expression_statement (assignment
  left: (identifier) @alias.name
  right: [(attribute) (identifier)] @alias.value) @alias))

((expression_statement (assignment
  left: (identifier) @alias.name
  right: (call
    function: [(identifier) (attribute)] @alias.wrapper
    (#match? @alias.wrapper "(^|[.])_?add_docstr$")
    arguments: (argument_list . [(attribute) (identifier)] @alias.value))) @alias))

; `max_pool2d = boolean_dispatch(..., if_true=max_pool2d_with_indices, if_false=_max_pool2d, ...)`: a name that
; calls one of two defs by an argument's value (torch._jit_internal.boolean_dispatch); one match per branch
((expression_statement (assignment
  left: (identifier) @dispatch.name
  right: (call
    function: [(identifier) (attribute)] @dispatch.wrapper
    (#match? @dispatch.wrapper "(^|[.])boolean_dispatch$")
    arguments: (argument_list
      (keyword_argument
        name: (identifier) @dispatch.branch (#any-of? @dispatch.branch "if_true" "if_false")
        value: [(attribute) (identifier)] @dispatch.value)))) @dispatch))

; __all__ = [...], __all__ += [...], __all__.extend([...]), __all__.append("x")
((expression_statement (assignment
  left: (identifier) @all.target (#eq? @all.target "__all__")
  right: [(list) (tuple)] @all.value) @all))

((expression_statement (augmented_assignment
  left: (identifier) @all.target (#eq? @all.target "__all__")
  right: [(list) (tuple)] @all.value) @all))

((expression_statement (call
  function: (attribute
    object: (identifier) @all.target (#eq? @all.target "__all__")
    attribute: (identifier) @all.method (#any-of? @all.method "extend" "append"))
  arguments: (argument_list . [(list) (tuple) (string)] @all.value)) @all))
