; Call sites: f(...) and obj.f(...); the receiver text is the qualifier (F, torch._C._nn, self, input).
; The call node itself is not captured (200k calls in a tree: every captured node costs); it starts where
; its object (or its name) starts.

(call function: (identifier) @call.name)

(call
  function: (attribute
    object: (_) @call.object
    attribute: (identifier) @call.name))
