"""Best counter-argument retrieval (the bipolar-encoder paper and Wachsmuth et al. 2018): `core`, `lexical`, `ltr`
and `neural`, their modules and the one-way import rule between them in docs/ARCHITECTURE.md ("Inside a method
package"); rankers register themselves with `core.registry` when imported."""
