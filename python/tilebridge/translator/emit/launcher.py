"""The PyO3 launcher of each kernel: its Python signature, the checks it makes of a launch's
arguments, and the parameters and generics it launches the kernel entry with; plus the
metadata the Python side maps `ct.launch` arguments with."""

from __future__ import annotations

import dataclasses
import json

from .. import ir
from ...dtypes import ARRAY_DTYPES, COMPUTED_ARRAY_DTYPES
from ...errors import TranslationError
from ...metadata import KernelMetadata, ParamMetadata
from ..rust_syntax import rust_name
from .rust_expr import rust_expr

# The launcher's own arguments (and PyO3's `py`): no kernel parameter may take their names.
LAUNCHER_ARGUMENTS = ("grid", "stream", "sync", "hints", "after", "py")


def check_launcher(kernel: ir.KernelIR) -> None:
    """Raises TranslationError where a parameter has the name of one of the launcher's own."""
    for p in kernel.params:
        if rust_name(p.name) in LAUNCHER_ARGUMENTS:
            raise TranslationError(f"{kernel.file}:{kernel.line}: kernel `{kernel.name}` has a parameter named "
                                   f"`{p.name}`, which its launcher takes for itself ({', '.join(LAUNCHER_ARGUMENTS[:5])}); "
                                   "rename the parameter")


def by_keyword(p: ir.Param) -> bool:
    """`ct.Constant` values are passed by keyword, as their names say what they configure."""
    return isinstance(p, ir.ConstParam) or (isinstance(p, ir.ScalarParam) and p.constant)


def _checks_tile_dim(c: ir.ConstParam) -> bool:
    """A tile dimension: the launcher checks it is a positive power of two (`check_tile_dim`)."""
    return c.tile_dim


def _checks_positive(c: ir.ConstParam) -> bool:
    """A divisor that is no tile dimension: the launcher checks it is positive (`check_positive`)."""
    return c.positive and not c.tile_dim


def launch_imports(kernels: list[ir.KernelIR]) -> list[str]:
    """What the launchers call of `tilebridge_runtime::launch`: the checks of constants any of them
    makes, the test of an array's dtype where one picks a variant by them, and `guard`, which every
    one does."""
    consts = [c for k in kernels for c in k.consts]
    checks = {"check_positive": any(map(_checks_positive, consts)),
              "check_tile_dim": any(map(_checks_tile_dim, consts)),
              "elem_in": any(len(k.family_test) > 1 for k in kernels),
              "elem_of": any(k.family for k in kernels)}
    return [f for f, used in checks.items() if used] + ["guard"]


def _signature(kernel: ir.KernelIR) -> str:
    """The launcher's `#[pyo3(signature)]`: the grid and the positional parameters, then the
    keyword ones."""
    py_params = [p.name for p in kernel.params if not by_keyword(p)]
    keywords = [p.name for p in kernel.params if by_keyword(p)]
    return ", ".join(["grid", *py_params]) + ", *, " + ", ".join([*keywords, "stream = None", "sync = true",
                                                                 "hints = None", "after = None"])


def _rust_args(kernel: ir.KernelIR, numbers: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """The launcher's Rust parameters (name, type) in the signature's order: positional ones first,
    then the keywords. `numbers`: scalars taken as any Python object (a dispatcher's)."""
    def rust_type(p: ir.Param) -> str:
        if isinstance(p, (ir.ArrayParam, ir.UnusedParam)) or p.name in numbers:
            return "&Bound<'py, PyAny>"
        return p.dtype if isinstance(p, ir.ScalarParam) else p.kind

    ordered = [p for p in kernel.params if not by_keyword(p)] + [p for p in kernel.params if by_keyword(p)]
    return [("grid", "&Bound<'py, PyAny>"), *((rust_name(p.name), rust_type(p)) for p in ordered),
            ("stream", "Option<Bound<'py, PyAny>>"), ("sync", "bool"),
            ("hints", "Option<tilebridge_runtime::launch::Hints>"), ("after", "Option<Bound<'py, PyAny>>")]


def launcher(kernel: ir.KernelIR) -> dict:
    """What the PyO3 launcher template needs, as Rust snippets. `kernel` has passed
    `check_launcher`."""
    k = kernel.name
    shown = kernel.public or k  # the name a launch knows the kernel by
    sig = _signature(kernel)
    args = [f"{n}: {t}" for n, t in _rust_args(kernel)]

    admit = [f"let _ = {rust_name(p.name)}; // the kernel never reads `{p.name}`" for p in kernel.params
             if isinstance(p, ir.UnusedParam)]
    if kernel.in_place:
        pairs = ", ".join(f'("{a}", "{b}")' for a, b in kernel.in_place)
        admit.append(f"launch.allow_in_place(&[{pairs}]);")
    for p in kernel.arrays:
        how = ("outputs" if p.written else "inputs") if p.listed else ("output" if p.written else "input")
        admit.append(f'let {rust_name(p.name)} = launch.{how}({rust_name(p.name)}, "{p.name}", {p.rank})?;')
    checks = [f'check_tile_dim("{shown}", "{c.name}", {rust_name(c.name)})?;' for c in kernel.consts
              if _checks_tile_dim(c)]
    checks += [f'check_positive("{shown}", "{c.name}", {rust_name(c.name)})?;' for c in kernel.consts
               if _checks_positive(c)]
    # tile dimensions computed from the constants (divisors checked positive above; each checked a
    # positive power of two below, where the kernel takes the branch that uses it)
    checks += [f"let {name}: i32 = {rust_expr(expr)}; // {text}" for name, expr, text in kernel.shape_consts]
    checks += [f"let {f.rust_name}: bool = {_dtype_test(kernel, f)};" for f in kernel.dtype_flags]
    for cond, why in kernel.launch_checks:
        message = json.dumps(f"kernel `{shown}`: {why}")
        checks.append(f"if !({rust_expr(cond)}) {{ return Err(tilebridge_runtime::error::argument({message})); }}")
    classes = []
    listed = {p.name for p in kernel.arrays if p.listed}  # a list stands in for its class by its first item
    for c in kernel.dtype_classes:
        members = ", ".join(f"{rust_name(m)}.first()" if m in listed else f"&{rust_name(m)}" for m in c.arrays)
        classes.append(f"let {c.rust_name.lower()} = launch.same_elem(&[{members}], {_elem_slice(c.allowed)})?;")
    # A condition on classes that a promotion's match binds is checked there (its other arms refuse).
    # What the promotions range over: every combination where recorded launches listed them, else
    # those of the classes that are not moved (a moved class meets no promotion).
    combos = kernel.launcher_combos() if kernel.dtype_combos is not None else kernel.computed_combos()
    matched = [set(_classes(kernel, p.of + p.stored_into)) for p in kernel.promoted]
    classes += [line for s in kernel.same_promotions
                if not any(set(_classes(kernel, s.of + s.equals)) <= m for m in matched)
                for line in _same_promotion(kernel, s, combos, listed)]
    classes += [line for p in kernel.promoted for line in _promotion(kernel, p, combos, listed)]
    for p in kernel.arrays:
        if p.view is not None:
            n = rust_name(p.name)
            divisors = ", ".join(f'("{d}", {rust_name(d)} as i64)' for d in p.view.divisors if d is not None)
            checks.append(f"// the kernel stores `{p.name}` at its block indices in another order, or split: as a view")
            checks.append(f'let {n} = {n}.block_view("{shown}", &[{", ".join(block_dims(p.view))}], &[{divisors}])?;')
        if p.streamed is not None:
            n = rust_name(p.name)
            checks.append(f"// the kernel stores `{p.name}` by a grid-stride loop over its first {p.streamed} tiles")
            rows = f"{rust_name(p.streamed)} as i64" + ("" if p.tile[0] == 1 else f" * {_dim(p.tile[0])} as i64")
            checks.append(f"let {n} = {n}.first_rows({rows});")
    # A partitioned output's tiles fix the grid: `Launch::submit` checks it (a streamed one: 1-D).
    for p in kernel.arrays:
        if p.strided:
            checks.append(f'launch.check_pointer_access(&{rust_name(p.name)}, "{p.name}")?;')

    # Each class's dtype was checked against its allowed list; where the combinations are fewer
    # than all of theirs (recorded launches), the combination is checked too.
    if kernel.dtype_combos is not None and len(combos) < kernel.product_count():
        scrutinee = _scrutinee([c.rust_name for c in kernel.dtype_classes])
        checks.append(f"if !matches!({scrutinee}, {' | '.join(map(_pattern, combos))}) {{ "
                      f"return Err(tilebridge_runtime::error::argument({json.dumps(_unbuilt_message(kernel))})); }}")
    return {
        "name": k,
        "fn": launcher_fn(kernel),
        "shown": shown,
        # A variant for one type of its unannotated scalars, or for a family of dtypes, is called by
        # its kernel's launcher (`dispatcher`, `family_dispatcher`), not from Python.
        "python": kernel.public is None,
        "doc": (f"Launches `{k}` ({kernel.file}:{kernel.line}) on the caller's stream." if kernel.public is None else
                f"`{shown}` ({kernel.file}:{kernel.line}) with " + ", ".join(
                    f"`{p}` {t}" for p, t in kernel.scalar_variant.items()) + f": called by `{shown}`'s launcher."
                if kernel.scalar_variant else
                f"`{shown}` ({kernel.file}:{kernel.line}) for arrays of {_family_words(kernel)}: called by "
                f"`{shown}`'s launcher."),
        "signature": sig,
        "args": args,
        "admit": admit,
        "classes": classes,
        "checks": checks,
        **submission(kernel),
    }


def _dim(d: ir.Dim) -> str:
    """A tile dimension as the launcher spells it: a number, or the constant's variable."""
    return rust_name(d) if isinstance(d, str) else str(d)


def block_dims(view: ir.BlockView) -> list[str]:
    """The dimensions each dimension of `view` spans, as Rust slices (`Array::block_view`)."""
    return [f"&[{', '.join(map(str, group))}]" for group in view.dims]


# The runtime crate's names for the dtype lists of arrays a kernel only moves (`array.rs`).
_ALLOWED_BY_NAME = {tuple(ARRAY_DTYPES): "&ANY_DTYPE", tuple(d for d in ARRAY_DTYPES if d != "bool"): "&ANY_DTYPE_BUT_BOOL"}


def _elem_slice(ds) -> str:
    """The dtypes `ds` as a Rust `&[ElemType]`: the runtime crate's name for the list, where it has one."""
    return _ALLOWED_BY_NAME.get(tuple(ds)) or "&[" + ", ".join(f"ElemType::{ARRAY_DTYPES[d].variant}" for d in ds) + "]"


def _promotion(kernel: ir.KernelIR, p: ir.PromotedDType, combos: list[tuple[str, ...]],
               listed: set[str]) -> list[str]:
    """The lines that bind promotion `p` from its classes' dtypes: a match over the combinations
    the launcher takes (`combos`), grouped by result, the rest refused with the arrays' dtypes named."""
    classes = _classes(kernel, p.of + p.stored_into)
    arms = _arms(kernel, classes, combos, lambda combo: kernel.promotions(combo)[p.rust_name])
    arrays, stored = _first_arrays(kernel, p.of), _first_arrays(kernel, p.stored_into)
    why = f"`{p.rust_name}`: cuTile Python's promotion of the dtypes of {', '.join(arrays)}" + (
        f", stored into {', '.join(stored)}" if stored else "")
    lines = [f"// {why}", f"let {p.rust_name.lower()} = match {_scrutinee(classes)} {{"]
    lines += [f"    {' | '.join(map(_pattern, keys))} => ElemType::{ARRAY_DTYPES[result].variant},"
              for result, keys in arms.items()]
    lines += [f"    _ => return Err({_refusal(kernel, classes, listed)}),", "};"]
    return lines


def _same_promotion(kernel: ir.KernelIR, s: ir.SamePromotion, combos: list[tuple[str, ...]],
                    listed: set[str]) -> list[str]:
    """The lines that refuse a launch where condition `s` does not hold (none of `combos`)."""
    classes = _classes(kernel, s.of + s.equals)
    keys = [key for found in _arms(kernel, classes, combos, lambda combo: "").values() for key in found]
    of, equals = _first_arrays(kernel, s.of), _first_arrays(kernel, s.equals)
    return [f"// cuTile Python's promotion of the dtypes of {', '.join(of)} is that of {', '.join(equals)} here",
            f"if !matches!({_scrutinee(classes)}, {' | '.join(map(_pattern, keys))}) {{",
            f"    return Err({_refusal(kernel, classes, listed)});", "}"]


def _arms(kernel: ir.KernelIR, classes: list[str], combos: list[tuple[str, ...]],
          result) -> dict[str, list[tuple[str, ...]]]:
    """The dtypes of `classes` at each of `combos`, grouped by `result(combo)`."""
    by_name = {c.rust_name: i for i, c in enumerate(kernel.dtype_classes)}
    arms: dict[str, list[tuple[str, ...]]] = {}
    for combo in combos:
        key = tuple(combo[by_name[c]] for c in classes)
        if key not in arms.setdefault(result(combo), []):
            arms[result(combo)].append(key)
    return arms


def _scrutinee(classes: list[str]) -> str:
    """The launcher's dtype variables of `classes`, a tuple of them where there are several."""
    names = ", ".join(c.lower() for c in classes)
    return f"({names})" if len(classes) > 1 else names


def _pattern(key: tuple[str, ...]) -> str:
    variants = ", ".join(f"ElemType::{ARRAY_DTYPES[d].variant}" for d in key)
    return f"({variants})" if len(key) > 1 else variants


def _classes(kernel: ir.KernelIR, names: list[str]) -> list[str]:
    """The dtype classes among `names` (rust_names and concrete dtypes), once each, in order."""
    known = {c.rust_name for c in kernel.dtype_classes}
    return [n for n in dict.fromkeys(names) if n in known]


def _bound_at_launch(kernel: ir.KernelIR) -> set[str]:
    """The type parameters whose dtype the launcher binds per launch (a variable each): the
    classes' and the promotions'."""
    return {c.rust_name for c in kernel.dtype_classes} | {p.rust_name for p in kernel.promoted}


def _dtype_name(d: str, bound: set[str]) -> str:
    """A dtype as the launcher has it: a bound type parameter's at run time, or a fixed one."""
    return f"{d.lower()}.as_str()" if d in bound else json.dumps(d)


def _dtype_test(kernel: ir.KernelIR, flag: ir.DTypeFlag) -> str:
    """`if A.dtype == ...` as the launcher decides it, from the dtypes it dispatches."""
    bound = _bound_at_launch(kernel)
    if flag.of == flag.equals or not {flag.of, flag.equals} & bound:
        return str(flag.of == flag.equals).lower()  # the kernel fixed them
    return f"{_dtype_name(flag.of, bound)} == {_dtype_name(flag.equals, bound)}"


def _first_arrays(kernel: ir.KernelIR, names: list[str]) -> list[str]:
    """The first array of each dtype class among `names`, and each concrete dtype as itself."""
    by_name = {c.rust_name: c for c in kernel.dtype_classes}
    return [by_name[n].arrays[0] if n in by_name else n for n in names]


def _refusal(kernel: ir.KernelIR, classes: list[str], listed: set[str]) -> str:
    """The error of a launch whose arrays of `classes` cuTile Python does not promote so."""
    arrays = ", ".join(f"{rust_name(a)}.first()" if a in listed else f"&{rust_name(a)}"
                       for a in _first_arrays(kernel, _classes(kernel, classes)))
    return f"launch.refused_promotion(&[{arrays}])"


# The Rust type of a scalar parameter as `tilebridge_runtime::kernel::Scalar` names it.
_SCALARS = {"i32": "I32", "i64": "I64", "f32": "F32", "f64": "F64", "bool": "Bool"}


def submission(kernel: ir.KernelIR) -> dict:
    """What a launch of `kernel` hands `Launch::submit` (`tilebridge_runtime::kernel`): the
    entry's name, its generics in declaration order (as `entry` in `emit.kernel` declares them),
    its parameters in its order, and the lines that make a list's table first."""
    prepare, args = [], []
    for p in kernel.runtime_params:
        n = rust_name(p.name)
        if isinstance(p, ir.ArrayParam) and p.listed:
            prepare.append(f"let {n}_table = launch.table(&{n})?;")
            args.append(f'Arg::Table("{n}", &{n}_table)')
        elif isinstance(p, ir.ArrayParam):
            if p.written and p.tile is not None:
                tile = ", ".join(_dim(d) for d in p.tile)
                kind = "Streamed" if p.streamed is not None else "Output"
                args.append(f'Arg::{kind}("{n}", &{n}, vec![{tile}])')
            else:
                args.append(f'Arg::Input("{n}", &{n})')
            if p.strided:
                args += [f'Arg::Scalar("{n}_stride_{axis}", Scalar::I32({n}.strides[{axis}]))'
                         for axis in range(p.rank - 1)]
        elif p.dtype in _SCALARS:
            args.append(f'Arg::Scalar("{n}", Scalar::{_SCALARS[p.dtype]}({n}))')
        else:
            raise TranslationError(f"{kernel.file}:{kernel.line}: kernel `{kernel.name}`: parameter `{p.name}` "
                                   f"is a {p.dtype} scalar, which a launch cannot pass yet")
    bound = _bound_at_launch(kernel)

    generics = [f"Generic::Dtype({c.rust_name.lower()})" for c in kernel.dtype_classes]
    generics += [f"Generic::Dtype({p.rust_name.lower()})" for p in kernel.promoted]

    def chosen(d: ir.DerivedDType) -> str:  # by a class's dtype, or by dtype flags
        test = rust_expr(d.test) if d.test is not None else f'{d.of.lower()}.as_str() == "{d.when}"'
        return f"Generic::Name(if {test} {{ {_dtype_name(d.then, bound)} }} else {{ {_dtype_name(d.other, bound)} }})"

    generics += [chosen(d) for d in kernel.derived]
    generics += [f"Generic::Bool({rust_name(c.name)})" if c.kind == "bool" else f"Generic::Int({rust_name(c.name)} as i64)"
                 for c in kernel.consts]
    if any(p.listed for p in kernel.arrays):
        prepare += [f"let {rust_name(p.name)}_divisors = {rust_name(p.name)}.divisors();" for p in kernel.arrays
                    if p.listed]
        generics += [f"Generic::Int({rust_name(p.name)}_divisors[{i}] as i64)" for p in kernel.arrays if p.listed
                     for i in range(len(ir.list_divisors(p)))]
    generics += [f"Generic::Int({rust_name(p.name)}.to_bits() as i32 as i64)" for p in kernel.float_consts]
    generics += [f"Generic::Int({name} as i64)" for name, _, _ in kernel.shape_consts]
    generics += [f"Generic::Bool({f.rust_name})" for f in kernel.dtype_flags]
    return {"entry": f"{kernel.name}_entry", "prepare": prepare, "generics": generics, "params": args}


def dispatcher(variants: list[ir.KernelIR]) -> dict:
    """The Python launcher of a kernel translated once per type of its unannotated scalars: it
    takes them as any Python number and calls the variant for their types, as cuTile Python
    specializes on them (int: i32, float: f32)."""
    first = variants[0]
    name, scalars = first.public, list(first.scalar_variant)
    args = _rust_args(first, tuple(scalars))
    by_rust_name = {rust_name(s): s for s in scalars}
    arms = []
    for v in variants:
        types = [v.scalar_variant[s] for s in scalars]
        call = [f"{n}.extract::<{v.scalar_variant[by_rust_name[n]]}>()?" if n in by_rust_name else n
                for n, _ in args]
        pattern = ", ".join(f'"{t}"' for t in types)
        arms.append((f"({pattern})" if len(types) > 1 else pattern, f"{v.name}(py, {', '.join(call)})"))
    kinds = ", ".join(f'scalar_dtype("{s}", {rust_name(s)})?' for s in scalars)
    built = " or ".join(", ".join(f"{s} {'int' if v.scalar_variant[s] == 'i32' else 'float'}" for s in scalars)
                        for v in variants)
    return {
        "name": name,
        "doc": f"Launches `{name}` ({first.file}:{first.line}) on the caller's stream; "
               f"{', '.join(f'`{s}`' for s in scalars)} an int or a float, as each launch passes it.",
        "signature": _signature(first),
        "args": [f"{n}: {t}" for n, t in args],
        "scrutinee": f"({kinds})" if len(scalars) > 1 else kinds,
        "arms": arms,
        "unbuilt": json.dumps(f"kernel `{name}` was translated for {built} only"),
    }


def launcher_fn(kernel: ir.KernelIR) -> str:
    """The Rust name of `kernel`'s launcher: its own, but where a dispatcher of that name calls it
    (the kernel as translated, whose variants for other dtypes share its launcher)."""
    return f"{kernel.name}_as_translated" if kernel.name == kernel.public else kernel.name


def _family_words(kernel: ir.KernelIR) -> str:
    """The dtypes a variant of `kernel` is for, as its docs say them."""
    if not kernel.family:
        return ", ".join(COMPUTED_ARRAY_DTYPES)
    return ", ".join(sorted({d for _, ds in kernel.family_test for d in ds}, key=list(ARRAY_DTYPES).index))


def family_note(variants: list[ir.KernelIR]) -> str:
    """What the kernel as translated says, of a dtype it refuses, that its launcher takes besides
    (`Launch::also_takes`): each variant's dtypes, for the arrays it tests."""
    first, *others = variants
    arrays = ", ".join(f"'{a}'" for a, _ in others[0].family_test)
    return f"with {arrays} of " + ", or of ".join(_family_words(v) for v in others)


def family_dispatcher(variants: list[ir.KernelIR]) -> dict:
    """The Python launcher of a kernel translated once more per family of dtypes of the arrays it
    computes with (`translator.FAMILIES`): it calls the variant whose family the arrays tested
    have (an array of each such class; every other check is the variant's), else the kernel as
    translated, whose checks then say what is wrong, as cuTile Python specializes on the dtypes
    launched."""
    first, *others = variants
    args = _rust_args(first)
    call = ", ".join(n for n, _ in args)

    def one_of(ds) -> str:
        return " | ".join(f"ElemType::{ARRAY_DTYPES[d].variant}" for d in ds)

    arms = []
    for v in others:
        if _rust_args(v) != args:
            raise TranslationError(f"{first.file}:{first.line}: kernel '{first.public}' takes other arguments "
                                   f"for {_family_words(v)} (a tilebridge bug)")
        (lead, ds), *rest = v.family_test
        test = " && ".join([f"matches!(elem, Some({one_of(ds)}))", *(
            f"elem_in({rust_name(a)}, {_elem_slice(ds)})"
            for a, ds in rest)])
        arms.append((test, f"{launcher_fn(v)}(py, {call})"))
    lead = others[0].family_test[0][0]
    return {
        "name": first.public,
        "doc": f"Launches `{first.public}` ({first.file}:{first.line}) on the caller's stream; its arrays of "
               f"{_family_words(first)}, or of " + ", or of ".join(_family_words(v) for v in others) + ".",
        "signature": _signature(first),
        "args": [f"{n}: {t}" for n, t in args],
        # the dtype of the first array tested, read once: where it is one the kernel was translated
        # for, no other is read
        "lead": rust_name(lead),
        "translated": one_of(COMPUTED_ARRAY_DTYPES),
        "arms": arms,
        "otherwise": f"{launcher_fn(first)}(py, {call})",
    }


def dispatched_metadata(variants: list[ir.KernelIR]) -> KernelMetadata:
    """The metadata of a launcher that picks a variant by the types of the unannotated scalars:
    the first variant's, each such scalar with the dtypes of every variant (`i32|f32`); or by the
    dtypes of the arrays: the first's, each dtype class with the dtypes of every variant."""
    meta = kernel_metadata(variants[0])
    if not variants[0].scalar_variant:
        # each class of the kernel as translated, with the dtypes its first array takes in each variant
        classes = {}
        for c in variants[0].dtype_classes:
            taken = [d for v in variants for vc in v.dtype_classes if c.arrays[0] in vc.arrays for d in vc.allowed]
            classes[c.rust_name] = list(dict.fromkeys(taken))
        checked = "; ".join(f"arrays of {_family_words(v)}: {v.checked}" for v in variants if v.checked)
        # safe where every variant is; what each leaves unsafe; in place only where every one allows
        reasons = list(dict.fromkeys(r for v in variants for r in v.safety.reasons))
        in_place = [pair for pair in meta.in_place if all(tuple(pair) in map(tuple, v.in_place) for v in variants)]
        return dataclasses.replace(meta, dtypes=classes, checked=checked, safe=all(v.safety.safe for v in variants),
                                   unsafe_reasons=reasons, in_place=in_place)
    dtypes = {s: "|".join(dict.fromkeys(v.scalar_variant[s] for v in variants)) for s in variants[0].scalar_variant}
    checked = "; ".join(", ".join(f"{s} {t}" for s, t in v.scalar_variant.items()) + f": {v.checked}"
                        for v in variants if v.checked)
    return dataclasses.replace(meta, checked=checked, params=tuple(
        dataclasses.replace(p, dtype=dtypes[p.name]) if p.name in dtypes else p for p in meta.params))


def _unbuilt_message(kernel: ir.KernelIR) -> str:
    """What the launcher says of a dtype combination it was not built for."""
    if kernel.dtype_combos is None:
        return "unsupported dtype combination"
    arrays = " / ".join(",".join(c.arrays) for c in kernel.dtype_classes)
    built = "; ".join(" / ".join(combo) for combo in kernel.dtype_combos)
    return (f"kernel `{kernel.name}` was built for these dtype combinations only ({arrays}: {built}); "
            "rebuild with launches recorded that use this one (tilebridge build --launches), or the dtypes stated")


def kernel_metadata(k: ir.KernelIR) -> KernelMetadata:
    """What the Python side needs to map `ct.launch` arguments onto the launcher (`tilebridge.json`):
    a `ct.Constant` is the one kind passed by keyword, as `by_keyword` has it."""
    params = []
    for p in k.params:
        if isinstance(p, ir.ArrayParam):
            params.append(ParamMetadata(p.name, "array_list" if p.listed else "array", rank=p.rank,
                                        written=p.written, tile=tuple(p.tile) if p.tile else None,
                                        dtype_class=p.dtype))
        elif isinstance(p, ir.ScalarParam):
            params.append(ParamMetadata(p.name, "constant" if p.constant else "scalar", dtype=p.dtype))
        elif isinstance(p, ir.UnusedParam):
            params.append(ParamMetadata(p.name, "unused"))
        else:
            params.append(ParamMetadata(p.name, "constant", dtype=p.kind))
    return KernelMetadata(k.file, k.line, tuple(params), {c.rust_name: list(c.allowed) for c in k.dtype_classes},
                          k.safety.safe, list(k.safety.reasons), list(k.in_place), k.checked)
