//! Taps baked into a kernel's code: a copy of the PTX in which every load of a mask tap
//! from its `.const` symbol at a constant offset is the tap's value itself.
//!
//! ptxas (sm_90) never takes a `.const` tap as an FFMA's constant-bank operand: it loads
//! the taps into uniform registers with `ULDC`, 63 at most, and reloads them every step
//! where a mask has more taps than that (BENCHMARKS.md §8, the twenty-second and
//! thirty-seventh sessions). A tap given as an immediate (`mov.b32 %r, 0f...`) becomes the
//! FFMA's 32-bit immediate operand, so those loads leave the loop. The compiled-radius
//! entries read every tap at an offset LLVM folded to a constant (`MASK_xD::get(i)` with
//! a constant `i`): `mov.u64 %rdA, MASK_xD;`, `add.s64 %rdB, %rdA, 4i;`,
//! `ld.const.f32 %r, [%rdB];`. A load this cannot resolve stays a load and is counted
//! ([`Baked::left`]): the host bakes only entries left with none.
use std::collections::{HashMap, HashSet};

/// A module of one entry with its taps baked in, and what the rewrite found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Baked {
    /// The whole PTX module: the header, the module-scope declarations, the functions the
    /// entry calls and the entry.
    pub ptx: String,
    /// Tap loads replaced by the tap's value.
    pub baked: usize,
    /// `.const` loads left in the module's functions (an offset not a constant, or
    /// another symbol).
    pub left: usize,
}

impl Baked {
    /// Whether the host runs this module: at least one tap baked and no tap load left
    /// (an entry whose taps run in a loop keeps reading the symbol).
    pub fn complete(&self) -> bool {
        complete(self.baked, self.left)
    }
}

/// [`Baked::complete`] from the counts [`Ptx::bake_module`] reports for an entry.
pub fn complete(baked: usize, left: usize) -> bool {
    baked > 0 && left == 0
}

/// One top-level piece of a PTX module: a function (definition or prototype) or any
/// other line (directive, declaration, comment).
struct Item<'a> {
    text: &'a str,
    /// The function's name, for functions.
    name: Option<&'a str>,
    /// A definition (has a body) rather than a prototype.
    body: bool,
}

/// Splits a PTX module into top-level items. A function starts at a line beginning
/// `.entry`, `.func` (after `.visible`, `.weak` or `.extern`) and ends at the first line
/// that is `}` (LLVM indents every inner brace) or, for a prototype, at the first `;`
/// before any `{`.
fn items(ptx: &str) -> Vec<Item<'_>> {
    let mut out = Vec::new();
    let mut rest = ptx;
    while !rest.is_empty() {
        let line_end = rest.find('\n').map_or(rest.len(), |i| i + 1);
        let line = &rest[..line_end];
        let Some(name) = function_name(line) else {
            out.push(Item {
                text: line,
                name: None,
                body: false,
            });
            rest = &rest[line_end..];
            continue;
        };
        // Scan to the end of the function.
        let (mut at, mut body) = (0, false);
        loop {
            let e = rest[at..].find('\n').map_or(rest.len(), |i| at + i + 1);
            let l = rest[at..e].trim_end();
            at = e;
            if !body && l.trim() == "{" {
                body = true;
            } else if (!body && l.ends_with(';')) || (body && l == "}") {
                break;
            }
            if at >= rest.len() {
                break;
            }
        }
        out.push(Item {
            text: &rest[..at],
            name: Some(name),
            body,
        });
        rest = &rest[at..];
    }
    out
}

/// The name of the function a line starts, if it starts one.
fn function_name(line: &str) -> Option<&str> {
    let mut rest = line.trim_start();
    while let Some(r) = [".visible", ".weak", ".extern"]
        .iter()
        .find_map(|q| rest.strip_prefix(q))
    {
        rest = r.trim_start();
    }
    let rest = rest.strip_prefix(".entry").or_else(|| rest.strip_prefix(".func"))?;
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let mut rest = rest.trim_start();
    // After `.func`, an optional return list `(.param .b32 func_retval0)`.
    if rest.starts_with('(') {
        rest = rest[rest.find(')')? + 1..].trim_start();
    }
    identifier(rest)
}

/// The PTX identifier `s` starts with (letters, digits, `_` and `$`), if any.
fn identifier(s: &str) -> Option<&str> {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'))
        .unwrap_or(s.len());
    (end > 0).then(|| &s[..end])
}

/// The functions a body calls (`call`, `call.uni`, with or without a return list).
fn callees(body: &str) -> Vec<&str> {
    body.lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let rest = l.strip_prefix("call")?;
            let rest = rest.strip_prefix(".uni").unwrap_or(rest).trim_start();
            let rest = if rest.starts_with('(') {
                rest[rest.find(')')? + 1..].trim_start().strip_prefix(',')?.trim_start()
            } else {
                rest
            };
            identifier(rest)
        })
        .collect()
}

/// An instruction line: whether it has a guard predicate (`@%p`), its opcode and its
/// operands (without the `;`); `None` for labels, directives, braces and comments.
fn instruction(line: &str) -> Option<(bool, &str, Vec<&str>)> {
    let l = line.split("//").next()?.trim();
    let l = l.strip_suffix(';')?.trim();
    let (guarded, l) = match l.strip_prefix('@') {
        Some(g) => (true, g.split_once([' ', '\t'])?.1.trim_start()),
        None => (false, l),
    };
    if l.starts_with('.') || l.starts_with('{') || l.starts_with('}') || l.ends_with(':') {
        return None;
    }
    let (op, args) = l.split_once([' ', '\t']).unwrap_or((l, ""));
    Some((
        guarded,
        op,
        args.split(',').map(str::trim).filter(|a| !a.is_empty()).collect(),
    ))
}

/// The registers an instruction writes, as far as an address register can be written:
/// its first operand, or every register of a leading `{...}` vector.
fn written<'a>(args: &[&'a str]) -> Vec<&'a str> {
    match args.first() {
        Some(a) if a.starts_with('{') => {
            let mut regs = Vec::new();
            for a in args {
                regs.push(a.trim_start_matches('{').trim_end_matches('}').trim());
                if a.ends_with('}') {
                    break;
                }
            }
            regs
        }
        Some(a) if a.starts_with('%') => vec![*a],
        _ => Vec::new(),
    }
}

/// Rewrites one function: every `ld.const.f32` from `sym` at a constant byte offset `o`
/// becomes `mov.b32` of tap `o / 4` (0 past the end of `taps`, as the zero-padded symbol
/// holds). Returns the text and the loads replaced and left.
fn bake_function(text: &str, sym: &str, taps: &[f32]) -> (String, usize, usize) {
    // Registers defined once in the function, as `mov.u64 %rd, sym` or `add.s64 %rd,
    // %rdK, imm` of such a register: their offset from `sym`. A register defined twice
    // (a loop's pointer) is left out.
    let mut defs: HashMap<&str, Vec<(&str, Vec<&str>)>> = HashMap::new();
    for l in text.lines() {
        if let Some((guarded, op, args)) = instruction(l) {
            for d in written(&args) {
                // A guarded write counts as a second definition.
                let list = defs.entry(d).or_default();
                if guarded {
                    list.push(("", Vec::new()));
                }
                list.push((op, args.clone()));
            }
        }
    }
    let mut offset: HashMap<&str, i64> = HashMap::new();
    loop {
        let before = offset.len();
        for (reg, list) in &defs {
            if list.len() != 1 || offset.contains_key(reg) {
                continue;
            }
            let (op, args) = &list[0];
            let found = match (*op, args.as_slice()) {
                ("mov.u64" | "mov.b64", [_, s]) if *s == sym => Some(0),
                ("add.s64" | "add.u64", [_, a, b]) => {
                    match (offset.get(a), b.parse::<i64>(), offset.get(b), a.parse::<i64>()) {
                        (Some(o), Ok(k), _, _) | (_, _, Some(o), Ok(k)) => Some(o + k),
                        _ => None,
                    }
                }
                _ => None,
            };
            if let Some(o) = found {
                offset.insert(reg, o);
            }
        }
        if offset.len() == before {
            break;
        }
    }
    let mut baked = 0;
    let mut out = String::with_capacity(text.len());
    for l in text.split_inclusive('\n') {
        let tap = instruction(l).and_then(|(guarded, op, args)| {
            let [dst, addr] = args.as_slice() else { return None };
            if op != "ld.const.f32" || guarded {
                return None;
            }
            let inner = addr.strip_prefix('[')?.strip_suffix(']')?;
            let (base, k) = match inner.split_once('+') {
                Some((b, k)) => (b.trim(), k.trim().parse::<i64>().ok()?),
                None => (inner.trim(), 0),
            };
            let o = if base == sym { k } else { offset.get(base)? + k };
            (o >= 0 && o % 4 == 0).then(|| (*dst, taps.get((o / 4) as usize).copied().unwrap_or(0.0)))
        });
        match tap {
            Some((dst, tap)) => {
                baked += 1;
                out.push_str(&format!("\tmov.b32 \t{dst}, 0f{:08X};\n", tap.to_bits()));
            }
            None => out.push_str(l),
        }
    }
    let left = out.lines().filter(|l| l.contains("ld.const")).count();
    (crate::launch_bounds::for_baked(&out), baked, left)
}

/// One entry of [`Ptx::bake_module`]: its `(entry, sym)`, the loads replaced and those
/// left.
pub type EntryBake<'e> = ((&'e str, &'e str), usize, usize);

/// A PTX module split once into its top-level items, so that baking one entry after
/// another does not split the whole module again each time.
pub struct Ptx<'a> {
    items: Vec<Item<'a>>,
    /// Each defined function's item, by name.
    defined: HashMap<&'a str, usize>,
}

impl<'a> Ptx<'a> {
    /// Splits `ptx` into its items.
    pub fn parse(ptx: &'a str) -> Ptx<'a> {
        let items = items(ptx);
        let defined = (items.iter().enumerate())
            .filter(|(_, i)| i.body)
            .filter_map(|(k, i)| Some((i.name?, k)))
            .collect();
        Ptx { items, defined }
    }

    /// The module of `entry` alone, with the taps of `sym` baked into it: the header and
    /// every top-level declaration, the functions `entry` calls (transitively), and `entry`
    /// rewritten. `None` where the module has no such entry.
    pub fn bake_entry(&self, entry: &str, sym: &str, taps: &[f32]) -> Option<Baked> {
        self.defined.get(entry)?;
        let mut needed: HashSet<&str> = HashSet::new();
        let mut todo = vec![entry];
        while let Some(f) = todo.pop() {
            if needed.insert(f) {
                if let Some(&k) = self.defined.get(f) {
                    todo.extend(callees(self.items[k].text));
                }
            }
        }
        let (mut out, mut baked, mut left) = (String::new(), 0, 0);
        for i in &self.items {
            match i.name {
                None => out.push_str(i.text),
                Some(n) if needed.contains(n) => {
                    if i.body {
                        let (t, b, l) = bake_function(i.text, sym, taps);
                        out.push_str(&t);
                        baked += b;
                        left += l;
                    } else {
                        out.push_str(i.text);
                    }
                }
                Some(_) => {}
            }
        }
        Some(Baked { ptx: out, baked, left })
    }

    /// The whole module with the taps of each `(entry, sym)` baked into that entry, every
    /// other function as it was (one module for ptxas to check every baked entry in one
    /// run), and each baked entry with its loads replaced and left.
    pub fn bake_module<'e>(&self, entries: &[(&'e str, &'e str)], taps: &[f32]) -> (String, Vec<EntryBake<'e>>) {
        let mut out = String::new();
        let mut report = Vec::new();
        for i in &self.items {
            match entries.iter().find(|(e, _)| i.body && i.name == Some(*e)) {
                Some(&(e, sym)) => {
                    let (t, b, l) = bake_function(i.text, sym, taps);
                    out.push_str(&t);
                    report.push(((e, sym), b, l));
                }
                None => out.push_str(i.text),
            }
        }
        (out, report)
    }
}

/// Every entry the host bakes taps into, with its symbol and the driver JIT's level for its
/// baked modules (`layout`'s `Entry::baked_taps`, `Entry::baked_jit_level`).
pub fn baked_entries() -> Vec<(String, &'static str, u32)> {
    layout::families::ALL
        .iter()
        .flat_map(|f| f.entries())
        .filter_map(|e| Some((e.to_string(), e.baked_taps()?.name, e.baked_jit_level())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = "\
.version 8.0
.target sm_90
.address_size 64
.const .align 16 .f32 MASK_2D[9];
.extern .shared .align 16 .b8 smem[];

.visible .func helper(
\t.param .b64 helper_param_0
)
{
\t.reg .b64 %rd<2>;
\tret;
}

.visible .func unused(
\t.param .b64 unused_param_0
)
{
\tret;
}

.visible .entry k(
\t.param .align 8 .b8 k_param_0[8]
)
.maxntid 256, 1, 1
{
\t.reg .b32 %r<9>;
\t.reg .b64 %rd<9>;
\t// begin inline asm
\tmov.u64 %rd1, MASK_2D;
\t// end inline asm
\tadd.s64 \t%rd2, %rd1, 8;
\tld.const.f32 %r1, [%rd1];
\tld.const.f32 %r2, [%rd2];
\tld.const.f32 %r3, [%rd2+4];
\tld.const.f32 %r4, [MASK_2D+40];
\tmov.u64 %rd3, MASK_2D;
\tmov.u64 %rd3, %rd4;
\tld.const.f32 %r5, [%rd3];
\t{ // callseq 0, 0
\t.param .b64 param0;
\tcall.uni helper, (param0);
\t} // callseq 0
\tret;
}
";

    #[test]
    fn finds_functions_and_calls() {
        let names: Vec<_> = items(PTX).iter().filter_map(|i| i.name).collect();
        assert_eq!(names, ["helper", "unused", "k"]);
        let k = items(PTX).into_iter().find(|i| i.name == Some("k")).unwrap();
        assert_eq!(callees(k.text), ["helper"]);
        assert_eq!(
            function_name(".visible .func  (.param .b32 func_retval0) f2("),
            Some("f2")
        );
        assert_eq!(function_name(".entry e("), Some("e"));
        assert_eq!(function_name("\tld.const.f32 %r1, [%rd1];"), None);
    }

    #[test]
    fn bakes_constant_offsets_and_keeps_the_rest() {
        let taps: Vec<f32> = (1..=9).map(|i| i as f32 * 0.5).collect();
        let ptx = Ptx::parse(PTX);
        let b = ptx.bake_entry("k", "MASK_2D", &taps).unwrap();
        assert_eq!((b.baked, b.left), (4, 1), "{}", b.ptx);
        assert!(b.ptx.contains(&format!("mov.b32 \t%r1, 0f{:08X};", 0.5f32.to_bits())));
        assert!(b.ptx.contains(&format!("mov.b32 \t%r2, 0f{:08X};", 1.5f32.to_bits())));
        assert!(b.ptx.contains(&format!("mov.b32 \t%r3, 0f{:08X};", 2.0f32.to_bits())));
        // Offset 40 is tap 10, past the 9 given: the padded symbol's zero.
        assert!(b.ptx.contains("mov.b32 \t%r4, 0f00000000;"));
        // %rd3 is defined twice: its load stays.
        assert!(b.ptx.contains("ld.const.f32 %r5, [%rd3];"));
        // The declarations, the callee and the entry; not the unused function.
        assert!(b.ptx.contains(".const .align 16 .f32 MASK_2D[9];"));
        assert!(b.ptx.contains(".extern .shared"));
        assert!(b.ptx.contains(".visible .func helper("));
        assert!(!b.ptx.contains("unused"));
        assert!(b.ptx.contains(".maxntid 256, 1, 1"));
        assert!(ptx.bake_entry("nope", "MASK_2D", &taps).is_none());
    }

    #[test]
    fn bake_module_keeps_every_function() {
        let (ptx, report) = Ptx::parse(PTX).bake_module(&[("k", "MASK_2D")], &[1.0; 9]);
        assert_eq!(report, [(("k", "MASK_2D"), 4, 1)]);
        assert!(ptx.contains("unused"));
        assert_eq!(ptx.lines().count(), PTX.lines().count());
    }
}
