"""Expert verification of FAM-Bench labels: a local review web app (``review serve``), its
decisions in SQLite (``store``), a versioned reviews file (``review export``) that ``fam build
--reviews`` applies, and agreement statistics (``review stats``)."""
