"""Local servers that speak the model vendors' streaming wire formats, for
Sparrow's adapters to be tested through the vendors' own client libraries.
Nothing here imports pytest: the benches use it too."""
