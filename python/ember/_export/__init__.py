"""ember._export: where torch keeps export's internals; ember has the part its documentation's
examples import (``_export.db.case.SupportLevel``, the exportdb examples' support tag)."""
