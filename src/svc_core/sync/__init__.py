"""Planning a sync, pure: what the MOLIT RTMS open API is asked and what it costs
(``rtms``), the R-ONE rental survey's answers, tables and eras (``rone``), and the pace
of calls (``pace``)."""
