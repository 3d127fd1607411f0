"""Page views, one module per area. Thin: read with selectors, write with services, render."""
