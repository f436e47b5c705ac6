; What an nn.Module registers: self.x = Parameter(...), self.register_parameter("x", ...), self.register_buffer(...).

(assignment
  left: (attribute
    object: (identifier) @parameter.self (#eq? @parameter.self "self")
    attribute: (identifier) @parameter.name)
  right: (call
    function: [(identifier) (attribute)] @parameter.ctor
    (#match? @parameter.ctor "(^|[.])(Parameter|UninitializedParameter)$"))) @parameter

(call
  function: (attribute
    object: (identifier) @registered.self (#eq? @registered.self "self")
    attribute: (identifier) @registered.method
    (#any-of? @registered.method "register_parameter" "register_buffer"))
  arguments: (argument_list . (string) @registered.name)) @registered
