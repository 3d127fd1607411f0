"""Page-number pagination: ``?page=N&page_size=M`` (at most 500 a page), with large counts cached
briefly (counting 100,000 matches is a scan of the table on every page otherwise)."""

from __future__ import annotations

import contextlib
import hashlib
from functools import cached_property

from django.core.cache import cache
from django.core.paginator import Paginator
from rest_framework.pagination import PageNumberPagination

#: Counts at least this large are cached for ``COUNT_CACHE_SECONDS``: a list that long moves by
#: a few rows in that time, and the count is only the pager's total.
COUNT_CACHE_FROM = 10_000
COUNT_CACHE_SECONDS = 10


class CountCachedPaginator(Paginator):
    @cached_property
    def count(self) -> int:
        query = getattr(self.object_list, "query", None)
        if query is None:  # a list: len() is free
            return super().count
        try:
            sql, params = query.sql_with_params()
        except Exception:  # an empty result set and the like: count it
            return super().count
        digest = hashlib.sha256(f"{sql}|{params!r}".encode()).hexdigest()[:32]
        key = f"arena:count:{digest}"
        try:
            found = cache.get(key)
        except Exception:  # the cache (Redis) is down: count
            return super().count
        if found is not None:
            return found
        total = super().count
        if total >= COUNT_CACHE_FROM:
            with contextlib.suppress(Exception):
                cache.set(key, total, timeout=COUNT_CACHE_SECONDS)
        return total


    def page(self, number):
        """The page; for a query set, its rows' ids are found first (an index-only scan skips
        the OFFSET rows) and then only those rows are read: page 1,500 of the match list read
        and threw away 75,000 whole rows otherwise."""
        number = self.validate_number(number)
        bottom = (number - 1) * self.per_page
        top = bottom + self.per_page
        if top + self.orphans >= self.count:
            top = self.count
        query = getattr(self.object_list, "query", None)
        ids_only = getattr(self.object_list, "_fields", None) in (("pk",), ("id",))
        if (query is None or bottom < DEFERRED_FROM or query.distinct or query.combinator
                or ids_only):  # a list of ids is read by ids already
            return self._get_page(self.object_list[bottom:top], number, self)
        ids = list(self.object_list.values_list("pk", flat=True)[bottom:top])
        return self._get_page(self.object_list.filter(pk__in=ids), number, self)


#: From this many rows skipped, pages are read by ids first (``CountCachedPaginator.page``).
DEFERRED_FROM = 1000


class ArenaPagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500
    django_paginator_class = CountCachedPaginator
