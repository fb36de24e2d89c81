"""The benchmarks where researchers already work (issue 21): Hugging Face datasets with a card
(:mod:`.hf`), inspect_ai tasks (:mod:`.inspect_tasks`), lm-evaluation-harness task export
(:mod:`.lm_eval_export`) and the NGQA graph as GraphML (:mod:`.graph`).

Each needs the optional extra ``interop`` (``pip install 'nutrireason[interop]'``); importing
this package needs nothing beyond the core.
"""
