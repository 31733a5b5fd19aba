"""The module-level lookup shared by ``dp.semiring``, ``dp.monoid``, ``dp.binary``, ``dp.unary``."""


def of(table: dict, kind: str):
    def names() -> list[str]:
        return sorted(table)

    def getattr_(name: str):
        if name.startswith("__") or name not in table:
            # AttributeError keeps hasattr()/getattr(default) working; the text lists the valid names.
            raise AttributeError(f"unknown {kind} {name!r}; valid {kind}s: {', '.join(names())}")
        return table[name]

    return names, getattr_
