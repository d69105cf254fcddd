//! What the PTX embedded in the host (`gpuconv::gpu::PTX`, built by host/build.rs through
//! ptx-builder on every clean build) must contain, walked from the kernel-family table:
//! every entry of every family, the memory spaces each variant is about. Runs without a GPU.
use gpuconv::gpu::PTX;
use gpuconv::Variant;
use layout::MaskLoc;
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

/// Every PTX entry of a family, the run-time-radius one and every compiled radius
/// (what `Auto` and the compiled entries launch), from the table.
fn entries_of(v: Variant) -> Vec<String> {
    v.family().expect("concrete").entries().map(|e| e.to_string()).collect()
}

fn body<'a>(bodies: &'a BTreeMap<String, String>, entry: &str) -> &'a str {
    bodies
        .get(entry)
        .unwrap_or_else(|| panic!(".entry {entry} missing from the PTX (have: {:?})", bodies.keys()))
}

/// Families that stage input tiles in shared memory: the tiled textbook kernels and ours.
fn tiled(v: Variant) -> bool {
    v.name().contains("_tiled") || v.name().ends_with("_fast")
}

#[test]
fn parser_splits_entries() {
    let sample = ".visible .entry a(\n.param .u32 p\n)\n{\n\tld.const.f32 %r1, [x];\n\t{ .reg .u64 q; }\n}\n\
                  .visible .func f()\n{\n}\n.visible .entry b_r2(\n)\n{\n\tret;\n}\n";
    let b = entry_bodies(sample);
    assert_eq!(b.keys().collect::<Vec<_>>(), ["a", "b_r2"]);
    assert!(b["a"].contains("ld.const") && b["a"].contains(".reg .u64 q"));
    assert!(!b["b_r2"].contains("ld.const"));
}

/// The PTX holds exactly the table's entries (ptx-builder checks it at build time; this
/// checks the module the library embeds).
#[test]
fn the_embedded_ptx_holds_exactly_the_table_s_entries() {
    let b = bodies();
    let mut expected: Vec<String> = Variant::all_entries();
    expected.push(layout::args::FMA_PROBE_ENTRY.to_string());
    for e in &expected {
        body(&b, e);
    }
    let unnamed: Vec<&String> = b.keys().filter(|k| !expected.contains(k)).collect();
    assert!(unnamed.is_empty(), "entries the table does not name: {unnamed:?}");
    for &v in Variant::ALL {
        assert!(!entries_of(v).is_empty(), "{v}");
    }
}

#[test]
fn const_mask_kernels_read_their_own_const_symbol() {
    let b = bodies();
    for &v in Variant::ALL {
        let MaskLoc::Const(mine) = v.family().unwrap().mask else {
            continue;
        };
        for e in entries_of(v) {
            let text = body(&b, &e);
            assert!(
                text.contains("ld.const"),
                "{e}: no ld.const (mask not read from constant memory)"
            );
            assert!(text.contains(mine.name), "{e}: does not reference {}", mine.name);
            for other in layout::masks::ALL.iter().filter(|s| s.name != mine.name) {
                assert!(!text.contains(other.name), "{e}: references {}", other.name);
            }
        }
    }
}

#[test]
fn tiled_kernels_use_shared_memory() {
    let b = bodies();
    for v in Variant::ALL.iter().copied().filter(|&v| tiled(v)) {
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
            assert!(text.contains("ld.shared"), "{e}: the shared tile is never read");
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
    for &v in Variant::ALL {
        if v.family().unwrap().mask != MaskLoc::Global {
            continue;
        }
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
fn const_mask_symbols_are_declared_with_their_table_lengths() {
    for sym in layout::masks::ALL {
        let decl = format!(".const .align 16 .f32 {}[{}];", sym.name, sym.len);
        assert!(PTX.lines().any(|l| l.trim() == decl), "missing `{decl}`");
    }
}

#[test]
fn every_entry_takes_its_argument_struct() {
    let b = bodies();
    let size = layout::ParamList::Conv.size();
    for e in Variant::all_entries() {
        body(&b, &e);
        let decl = format!(".visible .entry {e}(\n\t.param .align 8 .b8 {e}_param_0[{size}]\n)");
        assert!(PTX.contains(&decl), "{e}: parameter is not one {size}-byte ConvArgs");
    }
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
    for &v in Variant::ALL {
        for e in entries_of(v) {
            let text = body(&b, &e);
            assert!(text.contains("fma.rn.f32"), "{e}: no fma.rn.f32");
        }
    }
}

/// The fast kernels' accumulators must stay in registers (ptx-builder's unroll threshold):
/// a spilled accumulator array shows as a `__local_depot` of tens of bytes. Entries that
/// keep a loop rolled with `black_box` keep one small depot.
#[test]
fn fast_kernels_do_not_spill_accumulators_to_local_memory() {
    let b = bodies();
    for v in Variant::ALL.iter().copied().filter(|v| v.name().ends_with("_fast")) {
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
