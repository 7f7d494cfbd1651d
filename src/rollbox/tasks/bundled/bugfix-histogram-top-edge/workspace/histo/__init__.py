"""Equal-width histograms and a text renderer for them."""

from histo.binning import bin_edges, histogram
from histo.render import render

__all__ = ["bin_edges", "histogram", "render"]
