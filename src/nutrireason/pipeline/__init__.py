"""Pipeline stages: each build step with fingerprinted inputs and one ``ensure()``."""
