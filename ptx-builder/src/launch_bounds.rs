//! `__launch_bounds__` for Rust kernels. rustc has no attribute for it, so a kernel
//! declares its bounds with `launch_bounds!` (kernels-gpu/src/device.rs), which leaves a
//! PTX comment `// launch_bounds <entry> <max threads> <min blocks per SM>`; [`apply`]
//! turns each one into the entry's `.maxntid` / `.minnctapersm` directives, which tell
//! ptxas how many registers it may use (as nvcc does for `__launch_bounds__`). A third
//! number, the blocks per SM of the entry's code with its taps baked in (fewer
//! registers: `bake`), is left in the entry as a comment that [`for_baked`] turns into
//! its `.minnctapersm` when the host bakes it.

/// One declaration found in the PTX.
#[derive(Debug, PartialEq, Eq)]
pub struct LaunchBounds<'a> {
    /// The `.entry` it applies to.
    pub entry: &'a str,
    /// Most threads per block the kernel is launched with.
    pub max_threads: u32,
    /// Blocks that must fit on one SM at once.
    pub min_blocks: u32,
    /// Blocks that must fit on one SM at once with the taps baked in (`min_blocks`
    /// where the declaration gives no third number).
    pub baked_min_blocks: u32,
}

/// The comment [`apply`] leaves before an entry's body where its baked code asks for
/// other blocks per SM than its `.minnctapersm`: this prefix, then the number.
const BAKED: &str = "// baked .minnctapersm ";

/// Every `// launch_bounds` declaration in `ptx`.
pub fn declared(ptx: &str) -> Vec<LaunchBounds<'_>> {
    ptx.lines()
        .filter_map(|l| l.trim().strip_prefix("// launch_bounds "))
        .filter_map(|rest| {
            let mut it = rest.split_whitespace();
            let (entry, max_threads, min_blocks) = (it.next()?, it.next()?.parse().ok()?, it.next()?.parse().ok()?);
            Some(LaunchBounds {
                entry,
                max_threads,
                min_blocks,
                baked_min_blocks: it.next().map_or(Some(min_blocks), |k| k.parse().ok())?,
            })
        })
        .collect()
}

/// Inserts the declared directives after each named entry's parameter list. Returns the
/// new PTX, or the names of declared entries that were not found.
pub fn apply(ptx: &str) -> Result<String, Vec<String>> {
    let bounds = declared(ptx);
    let mut out = String::with_capacity(ptx.len() + 64 * bounds.len());
    let mut pending: Option<&LaunchBounds> = None;
    let mut applied = 0;
    for line in ptx.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix(".visible .entry ") {
            let name = rest.split(['(', ' ']).next().unwrap_or(rest);
            pending = bounds.iter().find(|b| b.entry == name);
        }
        // The body's opening brace follows the parameter list.
        if t == "{" {
            if let Some(b) = pending.take() {
                out.push_str(&format!(
                    ".maxntid {}, 1, 1\n.minnctapersm {}\n",
                    b.max_threads, b.min_blocks
                ));
                if b.baked_min_blocks != b.min_blocks {
                    out.push_str(&format!("{BAKED}{}\n", b.baked_min_blocks));
                }
                applied += 1;
            }
        }
        out.push_str(line);
        out.push('\n');
    }
    if applied != bounds.len() {
        let found = crate::entries(ptx);
        return Err(bounds
            .iter()
            .filter(|b| !found.contains(&b.entry))
            .map(|b| b.entry.to_string())
            .collect());
    }
    Ok(out)
}

/// A function's text (an entry with the directives [`apply`] wrote) as its code with the
/// taps baked in is declared: its `.minnctapersm` the baked count, where it has one.
pub fn for_baked(function: &str) -> String {
    let baked = function.lines().find_map(|l| l.trim().strip_prefix(BAKED));
    let mut out = String::with_capacity(function.len());
    for l in function.split_inclusive('\n') {
        match baked {
            Some(k) if l.trim_start().starts_with(".minnctapersm ") => {
                out.push_str(&format!(".minnctapersm {k}\n"));
            }
            _ => out.push_str(l),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = "// launch_bounds k1 256 2\n.visible .entry k1(\n\t.param .u32 a\n)\n{\n\tret;\n}\n.visible .entry k2()\n{\n\tret;\n}\n";

    #[test]
    fn inserts_directives_before_the_body_of_the_named_entry_only() {
        let out = apply(PTX).unwrap();
        assert!(out.contains(")\n.maxntid 256, 1, 1\n.minnctapersm 2\n{\n\tret;"));
        assert_eq!(out.matches(".maxntid").count(), 1);
        assert!(out.contains(".visible .entry k2()\n{"));
    }

    #[test]
    fn baked_blocks_per_sm_replace_the_directive_in_baked_code_only() {
        let out = apply(&PTX.replace("k1 256 2", "k1 256 2 3")).unwrap();
        assert!(out.contains(")\n.maxntid 256, 1, 1\n.minnctapersm 2\n// baked .minnctapersm 3\n{"));
        let baked = for_baked(&out);
        assert!(baked.contains(".minnctapersm 3\n") && !baked.contains(".minnctapersm 2"));
        // The same count twice leaves no comment, and code without one is unchanged.
        let same = apply(&PTX.replace("k1 256 2", "k1 256 2 2")).unwrap();
        assert!(!same.contains(BAKED));
        assert_eq!(for_baked(&same), same);
    }

    #[test]
    fn unknown_entry_is_an_error() {
        assert_eq!(
            apply("// launch_bounds nope 128 1\n").unwrap_err(),
            vec!["nope".to_string()]
        );
    }
}
