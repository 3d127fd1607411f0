"""Page-number pagination: ``?page=N&page_size=M`` (at most 500 a page)."""

from rest_framework.pagination import PageNumberPagination


class ArenaPagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500
