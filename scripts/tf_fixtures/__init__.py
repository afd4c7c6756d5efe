"""The cases and machinery of scripts/make_tf_fixtures.py (its module doc says
how it works): common.py (dtypes, geometry, data, the case list), one module
per op family's cases (convolutions.py, bad_inputs.py, pooling.py), the
TensorFlow worker (worker.py) and the parent that runs it and decides the
expectations (parent.py)."""
