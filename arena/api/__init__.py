"""The REST API: thin views over services (writes) and selectors (reads), with explicit input and
output serializers. Must not write rows itself or import ``arena.tasks``."""
