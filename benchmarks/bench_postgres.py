"""PostgreSQL beside Kuzu: now a part of ``benchmarks/bench_engines.py`` (every engine, every call beside the
raw engine query, docs/engines.md "Measured"); this name runs it on those two engines.

    PYTHONPATH=. python benchmarks/bench_postgres.py 100000 [bench_engines.py options]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_engines import main  # noqa: E402

if __name__ == "__main__":
    args = sys.argv[1:]
    scales = [a for a in args if a.isdigit()][:1]
    rest = [a for a in args if a not in scales]
    main(["--engines", "kuzu", "postgresql", *(["--scales", *scales] if scales else []), *rest])
