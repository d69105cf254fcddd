//! What the PTX embedded in the host (`gpuconv::gpu::PTX`, built by host/build.rs through
//! ptx-builder on every clean build) must contain: the memory spaces each textbook
//! variant is about. Runs without a GPU.
use gpuconv::gpu::PTX;
use gpuconv::Variant;
use std::collections::BTreeMap;

/// Splits a PTX module into `.entry` name -> body (from the entry's opening `{` to its
/// matching `}`; inline-asm `{ ... }` scopes nest inside and balance out).
fn entry_bodies(ptx: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut rest = ptx;
    while let Some(at) = rest.find(".entry ") {
        let after = &rest[at + ".entry ".len()..];
        let name: String = after
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$')
            .collect();
        let open = after.find('{').expect("entry has a body");
        let mut depth = 0usize;
        let mut end = None;
        for (i, c) in after[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(open + i + 1);
                        break;
                    }
                }
                _ => {}
            }
        }
        let end = end.unwrap_or_else(|| panic!("unbalanced braces in .entry {name}"));
        assert!(
            out.insert(name.clone(), after[open..end].to_string()).is_none(),
            "duplicate .entry {name}"
        );
        rest = &after[end..];
    }
    out
}

fn bodies() -> BTreeMap<String, String> {
    let b = entry_bodies(PTX);
    assert!(!b.is_empty(), "no .entry in the embedded PTX");
    b
}

/// The entries of a variant: one, or one per compiled radius for the fast kernels.
fn entries_of(v: Variant) -> Vec<String> {
    match v {
        Variant::Conv1dFast => gpuconv::variant::FAST_1D_RADII.map(|r| v.entry(r)).collect(),
        Variant::Conv2dFast => gpuconv::variant::FAST_2D_RADII.map(|r| v.entry(r)).collect(),
        v => vec![v.entry(0)],
    }
}

fn body<'a>(bodies: &'a BTreeMap<String, String>, entry: &str) -> &'a str {
    bodies
        .get(entry)
        .unwrap_or_else(|| panic!(".entry {entry} missing from the PTX (have: {:?})", bodies.keys()))
}

/// Variants whose mask lives in a `__constant__` symbol.
const CONST_MASK: &[Variant] = &[
    Variant::Conv1dConst,
    Variant::Conv1dTiled,
    Variant::Conv1dTiledCached,
    Variant::Conv1dFast,
    Variant::Conv2dConst,
    Variant::Conv2dTiledIn,
    Variant::Conv2dTiledCached,
    Variant::Conv2dFast,
];
/// Variants that stage input tiles in shared memory.
const TILED: &[Variant] = &[
    Variant::Conv1dTiled,
    Variant::Conv1dTiledCached,
    Variant::Conv1dFast,
    Variant::Conv2dTiledIn,
    Variant::Conv2dTiledCached,
    Variant::Conv2dFast,
];
/// The basic kernels: mask and input straight from global memory.
const BASIC: &[Variant] = &[Variant::Conv1dBasic, Variant::Conv2dBasic];

#[test]
fn parser_splits_entries() {
    let sample = ".visible .entry a(\n.param .u32 p\n)\n{\n\tld.const.f32 %r1, [x];\n\t{ .reg .u64 q; }\n}\n\
                  .visible .func f()\n{\n}\n.visible .entry b_r2(\n)\n{\n\tret;\n}\n";
    let b = entry_bodies(sample);
    assert_eq!(b.keys().collect::<Vec<_>>(), ["a", "b_r2"]);
    assert!(b["a"].contains("ld.const") && b["a"].contains(".reg .u64 q"));
    assert!(!b["b_r2"].contains("ld.const"));
}

#[test]
fn every_host_entry_is_in_the_ptx() {
    let b = bodies();
    for e in Variant::all_entries() {
        body(&b, &e);
    }
    for v in Variant::ALL_1D.into_iter().chain(Variant::ALL_2D) {
        assert!(!entries_of(v).is_empty(), "{v}");
    }
}

#[test]
fn const_mask_kernels_read_the_const_symbol() {
    let b = bodies();
    for &v in CONST_MASK {
        let (mine, other) = if v.dim() == 1 {
            ("MASK_1D", "MASK_2D")
        } else {
            ("MASK_2D", "MASK_1D")
        };
        for e in entries_of(v) {
            let text = body(&b, &e);
            assert!(
                text.contains("ld.const"),
                "{e}: no ld.const (mask not read from constant memory)"
            );
            assert!(text.contains(mine), "{e}: does not reference {mine}");
            assert!(!text.contains(other), "{e}: references {other}");
        }
    }
}

#[test]
fn tiled_kernels_use_shared_memory() {
    let b = bodies();
    for &v in TILED {
        for e in entries_of(v) {
            let text = body(&b, &e);
            // Writes of the tile: `st.shared`, or asynchronous global->shared copies
            // (`cp.async.{ca,cg}.shared.global`, the fast kernels' staging).
            assert!(
                text.contains("st.shared")
                    || text.contains("cp.async.ca.shared")
                    || text.contains("cp.async.cg.shared"),
                "{e}: no st.shared / cp.async to shared (tile not staged in shared memory)"
            );
            // Reads of the tile: `ld.shared`, or generic loads of a `cvta.shared` address
            // (LLVM merges the *_tiled_cached kernels' shared-or-global choice into one
            // generic load of a selected pointer).
            assert!(
                text.contains("ld.shared") || text.contains("cvta.shared"),
                "{e}: the shared tile is never read"
            );
            assert!(
                text.contains("bar.sync") || text.contains("barrier.sync"),
                "{e}: no barrier"
            );
        }
    }
}

#[test]
fn basic_kernels_read_mask_and_input_from_global_memory() {
    let b = bodies();
    for &v in BASIC {
        for e in entries_of(v) {
            let text = body(&b, &e);
            assert!(!text.contains("ld.const"), "{e}: basic kernel uses ld.const");
            assert!(
                !text.contains("MASK_"),
                "{e}: basic kernel references a .const mask symbol"
            );
            assert!(!text.contains(".shared"), "{e}: basic kernel uses shared memory");
            assert!(text.contains("ld.global"), "{e}: no global loads");
        }
    }
}

#[test]
fn const_mask_symbols_are_declared_with_their_sizes() {
    for decl in [
        ".const .align 16 .f32 MASK_1D[4095];",
        ".const .align 16 .f32 MASK_2D[3969];",
    ] {
        assert!(PTX.lines().any(|l| l.trim() == decl), "missing `{decl}`");
    }
    // Agrees with the sizes the host uploads (ptx_builder's table, seen through the
    // variants' limits).
    assert_eq!(2 * Variant::Conv1dConst.max_radius().0 + 1, 4095);
    assert_eq!((2 * Variant::Conv2dConst.max_radius().0 + 1).pow(2), 3969);
}

#[test]
fn no_unresolved_functions() {
    let externs: Vec<&str> = PTX
        .lines()
        .filter(|l| l.trim_start().starts_with(".extern .func"))
        .collect();
    assert!(externs.is_empty(), "unresolved functions in the PTX: {externs:?}");
}

#[test]
fn every_kernel_accumulates_with_fma() {
    let b = bodies();
    for v in Variant::ALL_1D.into_iter().chain(Variant::ALL_2D) {
        for e in entries_of(v) {
            let text = body(&b, &e);
            assert!(text.contains("fma.rn.f32"), "{e}: no fma.rn.f32");
        }
    }
}

/// The fast kernels' accumulators must stay in registers (ptx-builder's unroll threshold):
/// a spilled accumulator array shows as a `__local_depot` of tens of bytes. The r >= 5
/// 2D entries keep one 4-byte depot (a `black_box` on the row-loop bound).
#[test]
fn fast_kernels_do_not_spill_accumulators_to_local_memory() {
    let b = bodies();
    for v in [Variant::Conv1dFast, Variant::Conv2dFast] {
        for e in entries_of(v) {
            let text = body(&b, &e);
            for l in text
                .lines()
                .filter(|l| l.contains(".local") && l.contains("__local_depot"))
            {
                let bytes: usize = l
                    .rsplit('[')
                    .next()
                    .and_then(|s| s.trim_end_matches([']', ';', ' ']).parse().ok())
                    .unwrap_or_else(|| panic!("{e}: cannot read depot size in {l:?}"));
                assert!(bytes <= 8, "{e}: {bytes}-byte local depot (accumulators spilled?): {l}");
            }
        }
    }
}
