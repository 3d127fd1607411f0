"""Selectors: every read the API, pages and commands make. Keyword-only, typed; querysets come
back with what they need prefetched. Must not write rows or import services."""
