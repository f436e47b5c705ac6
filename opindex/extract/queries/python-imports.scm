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

; Aliases and __all__ are read from the module's own statements (not from inside if/try blocks or defs).
(module (expression_statement (assignment
  left: (identifier) @alias.name
  right: [(attribute) (identifier)] @alias.value) @alias))

(module (expression_statement (assignment
  left: (identifier) @alias.name
  right: (call
    function: [(identifier) (attribute)] @alias.wrapper
    (#match? @alias.wrapper "(^|[.])_?add_docstr$")
    arguments: (argument_list . [(attribute) (identifier)] @alias.value))) @alias))

; __all__ = [...], __all__ += [...], __all__.extend([...]), __all__.append("x")
(module (expression_statement (assignment
  left: (identifier) @all.target (#eq? @all.target "__all__")
  right: [(list) (tuple)] @all.value) @all))

(module (expression_statement (augmented_assignment
  left: (identifier) @all.target (#eq? @all.target "__all__")
  right: [(list) (tuple)] @all.value) @all))

(module (expression_statement (call
  function: (attribute
    object: (identifier) @all.target (#eq? @all.target "__all__")
    attribute: (identifier) @all.method (#any-of? @all.method "extend" "append"))
  arguments: (argument_list . [(list) (tuple) (string)] @all.value)) @all))

; `func = _fused_adamw` inside a def (then `func(...)`): a call of what the name holds (python.py, _calls)
(block (expression_statement (assignment
  left: (identifier) @funcvar.name
  right: [(attribute) (identifier)] @funcvar.value) @funcvar))
