"""Shared test configuration. pytest-django loads ``config.settings`` for every test, but only
tests that ask for a database get one, so engine and sandbox tests run as before."""
