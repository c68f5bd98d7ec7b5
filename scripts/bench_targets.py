"""The targets of scripts/bench, kept as the sections measure them and printed together at the end, each with its
figure, what it is compared with, and PASS or MISS."""

_results = []


def check(name, figure, target, passed):
    """Records one target: `figure` is what was measured (with its ratio where the target is one), `target` the
    bound as the issue states it, `passed` whether the figure meets it. Returns `passed`."""
    _results.append((name, figure, target, bool(passed)))
    return passed


def at_most(name, value, bound, unit="", digits=2):
    """Records `value <= bound`, both printed in `unit`."""
    return check(name, f"{value:.{digits}f}{unit}", f"<= {bound:g}{unit}", value <= bound)


def print_summary():
    """Prints every recorded target, then how many were met."""
    width = max(len(name) for name, *_ in _results)
    print("targets:")
    for name, figure, target, passed in _results:
        print(f"  {'PASS' if passed else 'MISS'}  {name:{width}}  {figure:>24}  (target {target})")
    met = sum(passed for *_, passed in _results)
    print(f"  {met} of {len(_results)} met")
