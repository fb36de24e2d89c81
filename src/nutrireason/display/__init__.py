"""How results are shown: the table model and its renderers (:mod:`.table`), the groups of
metrics.json as one frame (:mod:`.groups`), the figures' canvas (:mod:`.figures`) and what a
benchmark adds to a report (:mod:`.section`).

The report and each benchmark's own report section build on these; nothing here names a
benchmark.
"""
