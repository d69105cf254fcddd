//! Every way a call can fail: the typed `Error`, its message, and that a refused call
//! leaves the caller's device buffers alone. The pure functions (mask radius, launch
//! shapes, `Variant::resolve`) are tested without a GPU; the calls on `Gpu` are GPU-gated.
use gpuconv::conv::{launch_shape, mask_radius};
use gpuconv::{Error, Mode, Options, Variant};
use gpuconv_tests::{gpu, random_array};
use layout::families as fam;
use ndarray::{Array, Array1, Array2, ArrayD, IxDyn};

/// The variants for plain arrays (the image ones have their own tests below).
fn arrays() -> impl Iterator<Item = Variant> {
    Variant::ALL.iter().copied().filter(|v| !v.is_image())
}

/// `v.resolve` for a mask of radius `r` on every axis, of rank 1 where `v` is separable.
fn resolve(v: Variant, dim: usize, r: usize) -> gpuconv::Result<Variant> {
    let rank1 = v.family().is_some_and(|f| f.separable);
    v.resolve_mask(dim, iso(dim, r as u32), rank1, Mode::Zero)
}

/// Radii `[r; dim]` x first, 0 past the dimension.
fn iso(dim: usize, r: u32) -> [u32; 3] {
    let mut a = [0; 3];
    a[..dim].fill(r);
    a
}

// ================================================================ no GPU needed

#[test]
fn mask_radius_accepts_odd_sides_and_refuses_empty_and_even() {
    assert_eq!(mask_radius(&[1]).unwrap(), [0, 0, 0]);
    assert_eq!(mask_radius(&[4095]).unwrap(), [2047, 0, 0]);
    assert_eq!(mask_radius(&[63, 63]).unwrap(), [31, 31, 0]);
    // Rectangular masks: each side odd, chosen independently (x, the last axis, first).
    assert_eq!(mask_radius(&[1, 9]).unwrap(), [4, 0, 0]);
    assert_eq!(mask_radius(&[7, 3]).unwrap(), [1, 3, 0]);
    assert_eq!(mask_radius(&[5, 3, 1]).unwrap(), [0, 1, 2]);
    for shape in [
        &[0usize][..],
        &[2],
        &[4096],
        &[0, 0],
        &[2, 2],
        &[3, 4],
        &[4, 3],
        &[3, 0],
        &[3, 3, 2],
    ] {
        match mask_radius(shape) {
            Err(Error::BadMask { shape: s }) => assert_eq!(s, shape),
            other => panic!("{shape:?}: expected BadMask, got {other:?}"),
        }
    }
    let msg = mask_radius(&[3, 4]).unwrap_err().to_string();
    assert!(
        msg.contains("[3, 4]") && msg.contains("odd"),
        "unhelpful message: {msg}"
    );
    assert!(matches!(
        mask_radius(&[3, 3, 3, 3]),
        Err(Error::UnsupportedDimension { ndim: 4 })
    ));
}

#[test]
fn resolve_accepts_up_to_max_radius_and_refuses_beyond() {
    for v in arrays() {
        let (max, why) = v.max_radius();
        assert!(!why.is_empty());
        assert_eq!(resolve(v, v.dim(), 0).unwrap(), v);
        assert_eq!(resolve(v, v.dim(), max).unwrap(), v, "{v} at its max radius {max}");
        match resolve(v, v.dim(), max + 1) {
            Err(Error::MaskTooLarge {
                variant,
                radius,
                max: m,
                why: w,
            }) => assert_eq!((variant, radius, m, w), (v, max + 1, max, why)),
            other => panic!("{v} radius {}: expected MaskTooLarge, got {other:?}", max + 1),
        }
        let msg = resolve(v, v.dim(), max + 1).unwrap_err().to_string();
        for part in [
            format!("{}", max + 1),
            format!("{max}"),
            why.to_string(),
            v.name().to_string(),
        ] {
            assert!(msg.contains(&part), "{v}: message {msg:?} lacks {part:?}");
        }
    }
}

#[test]
fn max_radii_follow_from_constant_and_shared_memory() {
    let max = |v: Variant| v.max_radius().0;
    assert_eq!(max(Variant::Conv1dConst), 2047, "MASK_1D holds 4095 taps");
    assert_eq!(max(Variant::Conv1dTiled), 2047);
    assert_eq!(max(Variant::Conv1dTiledCached), 2047);
    assert_eq!(max(Variant::Conv1dFast), 16);
    assert_eq!(max(Variant::Conv2dConst), 31, "MASK_2D holds 63x63 taps");
    assert_eq!(max(Variant::Conv2dTiledCached), 31);
    assert_eq!(
        max(Variant::Conv2dTiledIn),
        15,
        "32x32 input tile, output tile 32-2r >= 2"
    );
    assert_eq!(max(Variant::Conv2dFast), 8);
    assert_eq!(max(Variant::Conv3dConst), 7, "MASK_3D holds 15x15x15 taps");
    assert_eq!(max(Variant::Conv3dTiledCached), 7);
    assert_eq!(
        max(Variant::Conv3dTiledIn),
        3,
        "8x8x8 input tile, output tile 8-2r >= 2"
    );
    assert_eq!(max(Variant::Conv3dFast), 3);
    // The basic kernels index the mask with 32 bits: (2r+1)^d taps <= i32::MAX.
    for (v, d) in [
        (Variant::Conv1dBasic, 1),
        (Variant::Conv2dBasic, 2),
        (Variant::Conv3dBasic, 3),
    ] {
        let b = max(v) as u64;
        assert!(
            (2 * b + 1).pow(d) <= i32::MAX as u64 && (2 * b + 3).pow(d) > i32::MAX as u64,
            "{v}: {b}"
        );
    }
    assert_eq!(max(Variant::Conv3dBasic), 644);
}

#[test]
fn resolve_refuses_the_wrong_dimension() {
    for v in arrays() {
        for dim in (1..=3).filter(|&d| d != v.dim()) {
            match resolve(v, dim, 1) {
                Err(ref e @ Error::WrongDimension { variant, dim: d }) => {
                    assert_eq!((variant, d), (v, dim));
                    let msg = e.to_string();
                    assert!(msg.contains(&format!("{dim}D")) && msg.contains(v.name()), "{msg}");
                }
                other => panic!("{v} for {dim}D: expected WrongDimension, got {other:?}"),
            }
        }
    }
    for dim in [0, 4, 5] {
        assert!(matches!(
            Variant::Auto.resolve(dim, 1),
            Err(Error::UnsupportedDimension { ndim }) if ndim == dim
        ));
    }
}

#[test]
fn resolve_auto_follows_the_measured_order() {
    let auto = |dim, r| Variant::Auto.resolve(dim, r).unwrap();
    for r in 0..=16 {
        assert_eq!(auto(1, r), Variant::Conv1dFast, "1D r={r}");
    }
    for r in [17, 100, 2047] {
        assert_eq!(auto(1, r), Variant::Conv1dTiled, "1D r={r}");
    }
    for r in [2048, 100_000] {
        assert_eq!(auto(1, r), Variant::Conv1dBasic, "1D r={r}");
    }
    // A 1x1 mask is one row tall: conv1d_fast on every row.
    assert_eq!(auto(2, 0), Variant::Conv1dFast);
    for r in 1..=8 {
        assert_eq!(auto(2, r), Variant::Conv2dFast, "2D r={r}");
    }
    for (rs, v) in [
        (&[9, 15][..], Variant::Conv2dTiledIn),
        (&[16, 31], Variant::Conv2dConst),
        (&[32, 1000, 23_169], Variant::Conv2dBasic),
    ] {
        for &r in rs {
            assert_eq!(auto(2, r), v, "2D r={r}");
        }
    }
    // A 1x1x1 mask is one plane deep: conv2d_fast on every plane.
    assert_eq!(auto(3, 0), Variant::Conv2dFast);
    for r in 1..=3 {
        assert_eq!(auto(3, r), Variant::Conv3dFast, "3D r={r}");
    }
    for r in [4, 7] {
        assert_eq!(auto(3, r), Variant::Conv3dConst, "3D r={r}");
    }
    for r in [8, 644] {
        assert_eq!(auto(3, r), Variant::Conv3dBasic, "3D r={r}");
    }
    // Beyond what any kernel supports, Auto reports the limit of the kernel it fell to.
    assert!(matches!(
        Variant::Auto.resolve(2, 23_170),
        Err(Error::MaskTooLarge {
            variant: Variant::Conv2dBasic,
            ..
        })
    ));
}

#[test]
fn textbook_variants_refuse_other_ghost_cell_modes() {
    for v in arrays().filter(|v| !v.all_modes()) {
        // (separable families implement every mode)
        let r = iso(v.dim(), 1);
        assert_eq!(v.resolve_for(v.dim(), r, Mode::Zero).unwrap(), v);
        match v.resolve_for(v.dim(), r, Mode::Reflect) {
            Err(ref e @ Error::ModeUnsupported { variant, mode, .. }) => {
                assert_eq!((variant, mode), (v, Mode::Reflect));
                assert!(
                    e.to_string().contains("reflect") && e.to_string().contains(v.name()),
                    "{e}"
                );
            }
            other => panic!("{v}: expected ModeUnsupported, got {other:?}"),
        }
    }
}

#[test]
fn image_resolution_checks_variant_radius_channels_and_mode() {
    let ok = |v: Variant, r: u32, c: u32, m: Mode| v.resolve_image([r, r, 0], c, m);
    for c in 1..=4 {
        assert_eq!(ok(Variant::Auto, 4, c, Mode::Reflect).unwrap(), Variant::ImageFast);
        assert_eq!(ok(Variant::Auto, 5, c, Mode::Zero).unwrap(), Variant::ImageTiled);
    }
    // Past image_fast's radii, only the textbook kernel (zero ghost cells) remains.
    assert!(matches!(
        ok(Variant::Auto, 5, 3, Mode::Reflect),
        Err(Error::ModeUnsupported { .. })
    ));
    assert!(matches!(
        ok(Variant::ImageTiled, 1, 3, Mode::Nearest),
        Err(Error::ModeUnsupported { .. })
    ));
    assert!(matches!(
        ok(Variant::ImageFast, 5, 3, Mode::Zero),
        Err(Error::MaskTooLarge { max: 4, .. })
    ));
    assert!(matches!(
        ok(Variant::ImageTiled, 16, 3, Mode::Zero),
        Err(Error::MaskTooLarge { max: 15, .. })
    ));
    assert!(matches!(
        ok(Variant::ImageFast, 1, 5, Mode::Zero),
        Err(Error::Channels { channels: 5 })
    ));
    assert!(matches!(
        ok(Variant::Conv2dFast, 1, 3, Mode::Zero),
        Err(Error::NotForImages { .. })
    ));
    // A rectangular mask runs on image_fast's entry of its larger radius.
    assert_eq!(
        Variant::Auto.resolve_image([1, 4, 0], 3, Mode::Wrap).unwrap(),
        Variant::ImageFast
    );
    assert!(matches!(
        Variant::ImageFast.resolve_for(2, [1, 1, 0], Mode::Zero),
        Err(Error::OnlyForImages { .. })
    ));
}

#[test]
fn variant_names_round_trip_and_display() {
    for &v in Variant::ALL.iter().chain([&Variant::Auto]) {
        assert_eq!(Variant::from_name(v.name()), Some(v));
        assert_eq!(v.to_string(), v.name());
    }
    assert_eq!(Variant::from_name("conv4d_basic"), None);
}

#[test]
fn launch_shapes_of_auto_are_those_of_the_variant_it_picks() {
    for (dim, shape, radii) in [
        (1, &[5000][..], &[0u32, 3, 16, 17, 2047][..]),
        (2, &[300, 200], &[0, 2, 3, 4, 8, 9, 31]),
        (3, &[40, 50, 60], &[0, 1, 3, 4, 7]),
    ] {
        for &r in radii {
            let v = Variant::Auto.resolve(dim, r as usize).unwrap();
            // Arrays run array families: image families take only images.
            assert!(!v.is_image(), "{dim}D r={r}: {v}");
            let want = launch_shape(v, shape, iso(dim, r)).unwrap();
            assert_eq!(launch_shape(Variant::Auto, shape, iso(dim, r)).unwrap(), want);
        }
    }
}

/// Outputs per block along x, y, z of each family: what its kernel computes, read from
/// the same `layout` constants the kernel indexes with.
fn outputs_per_block(v: Variant, r: u32) -> [usize; 3] {
    use fam::textbook::*;
    let t3 = TILE_3D as usize;
    match v {
        Variant::Conv1dBasic | Variant::Conv1dConst | Variant::Conv1dTiled | Variant::Conv1dTiledCached => {
            [BLOCK_1D as usize, 1, 1]
        }
        Variant::Conv1dFast => [fam::conv1d_fast::TILE as usize, 1, 1],
        Variant::Conv2dBasic | Variant::Conv2dConst => [BLOCK_2D.0 as usize, BLOCK_2D.1 as usize, 1],
        Variant::Conv2dTiledIn => [(TILE_2D - 2 * r) as usize, (TILE_2D - 2 * r) as usize, 1],
        Variant::Conv2dTiledCached => [TILE_2D as usize, TILE_2D as usize, 1],
        Variant::Conv3dBasic | Variant::Conv3dConst => [BLOCK_3D.0 as usize, BLOCK_3D.1 as usize, BLOCK_3D.2 as usize],
        Variant::Conv3dTiledIn => [(TILE_3D - 2 * r) as usize; 3],
        Variant::Conv3dTiledCached => [t3; 3],
        Variant::Conv3dFast => {
            use fam::conv3d_fast::*;
            [TILE_W as usize, tile_h(r) as usize, CHUNK_Z as usize]
        }
        Variant::Conv2dSeparable => {
            use fam::conv2d_separable::*;
            [TILE_W as usize, chunk(r) as usize, 1]
        }
        Variant::Conv3dSeparable => {
            use fam::conv3d_separable::*;
            [tile_w(r) as usize, tile_h(r) as usize, CHUNK_Z as usize]
        }
        // conv2d_fast numbers its tiles in one grid axis; checked below.
        v => panic!("{v}: no per-axis tile"),
    }
}

/// Shared memory a block may use on sm_90 once the kernel opts in (the host does so
/// above 48 KiB); the textbook kernels stay under the default 48 KiB.
const SM90_MAX_SHARED: u32 = 227 * 1024;

#[test]
fn launch_shapes_cover_every_output_and_fit_the_gpu() {
    let shapes: [&[&[usize]]; 3] = [
        &[&[1], &[3], &[1023], &[1024], &[1025], &[100_000]],
        &[&[1, 1], &[31, 33], &[32, 128], &[33, 129], &[1000, 3], &[4200, 130]],
        &[&[1, 1, 1], &[7, 9, 33], &[65, 17, 129], &[130, 3, 2]],
    ];
    for v in arrays() {
        let dim = v.dim();
        for r in [0u32, 1, 3, 16, 17, 32]
            .into_iter()
            .filter(|&r| r as usize <= v.max_radius().0)
        {
            for shape in shapes[dim - 1] {
                let s = launch_shape(v, shape, iso(dim, r)).unwrap();
                assert!(s.threads() <= 1024 && s.threads() > 0, "{v}: {s:?}");
                // Ours opt in to large shared memory; the textbook kernels stay under 48 KiB.
                let ours = v.name().ends_with("_fast") || v.family().unwrap().separable;
                let limit = if ours { SM90_MAX_SHARED } else { 48 * 1024 };
                assert!(s.shared_bytes <= limit, "{v} r={r}: {s:?}");
                let grid = [s.grid.0 as usize, s.grid.1 as usize, s.grid.2 as usize];
                let extent: Vec<usize> = shape.iter().rev().copied().collect();
                if v == Variant::Conv2dFast {
                    use fam::conv2d_fast::*;
                    let tiles = extent[0].div_ceil(TILE_W as usize) * extent[1].div_ceil(tile_h(r, 1) as usize);
                    assert_eq!(grid, [tiles, 1, 1], "{v} r={r} {shape:?}: one block per tile");
                    continue;
                }
                let mut per = outputs_per_block(v, r);
                if s.persistent && (v == Variant::Conv3dFast || v == Variant::Conv3dSeparable) {
                    // Balanced: a 1D grid whose blocks (as many as the GPU at hand
                    // holds, or fewer) share every column's planes.
                    assert!(s.grid.1 == 1 && s.grid.2 == 1 && s.depth.is_none(), "{v}: {s:?}");
                    let e = [extent[0] as u32, extent[1] as u32, extent[2] as u32];
                    let units = fam::conv3d_fast::walk_units(e, (per[0] as u32, per[1] as u32));
                    for slots in [1, 7, 264, 100_000] {
                        let blocks = s.grid.0.min(slots);
                        let mut next = 0;
                        for b in 0..blocks {
                            let (start, end) = fam::conv3d_fast::balanced_range(b, blocks, units);
                            assert!(start == next && end > start, "{v} {shape:?}: block {b} of {blocks}");
                            next = end;
                        }
                        assert_eq!(next, units, "{v} {shape:?}: {blocks} blocks");
                    }
                    continue;
                }
                if s.persistent && v == Variant::Conv2dSeparable {
                    // Balanced: a 1D grid whose blocks (as many as the GPU at hand holds,
                    // or fewer) walk every strip's output steps once, a strip's part at a time.
                    use fam::conv2d_separable::{segment, share_units, STEP, TILE_W};
                    assert!(s.grid.1 == 1 && s.grid.2 == 1 && s.depth.is_none(), "{v}: {s:?}");
                    let (w, h) = (extent[0] as u32, extent[1] as u32);
                    let (strips, steps) = (w.div_ceil(TILE_W), h.div_ceil(STEP));
                    let units = share_units(r, [w, h]);
                    for slots in [1, 7, 264, 100_000] {
                        let blocks = s.grid.0.min(slots);
                        let mut next = (0, 0);
                        for b in 0..blocks {
                            let (mut u, end) = fam::conv3d_fast::balanced_range(b, blocks, units);
                            assert!(u < end, "{v} {shape:?}: block {b} of {blocks} has no units");
                            while u < end {
                                let g = segment(r, h, u, end);
                                assert!(g.next > u && g.next <= end, "{v} {shape:?}: {g:?}");
                                if g.end > g.first {
                                    assert_eq!((g.strip, g.first), next, "{v} {shape:?}: block {b} of {blocks}");
                                    next = if g.end == steps {
                                        (g.strip + 1, 0)
                                    } else {
                                        (g.strip, g.end)
                                    };
                                }
                                u = g.next;
                            }
                        }
                        assert_eq!(next, (strips, 0), "{v} {shape:?}: {blocks} blocks");
                    }
                    continue;
                }
                if v == Variant::Conv3dFast || v == Variant::Conv3dSeparable {
                    // Chunks of depth follow the grid (shorter for small volumes): every
                    // plane covered, no block without one.
                    let chunk = fam::conv3d_fast::chunk_z(extent[2] as u32, s.grid.2) as usize;
                    assert!(
                        chunk <= per[2] && (grid[2] - 1) * chunk < extent[2],
                        "{v} {shape:?}: {s:?}"
                    );
                    per[2] = chunk;
                    // The launch's re-cut for any GPU: every plane covered, no empty chunk.
                    let depth = s.depth.expect("the 3D fast kernels cut depth");
                    for slots in [1, 7, 264, 100_000] {
                        let n = depth.chunks(s.grid.0 * s.grid.1, slots);
                        let c = fam::conv3d_fast::chunk_z(extent[2] as u32, n) as usize;
                        let n = n as usize;
                        assert!(
                            (n - 1) * c < extent[2] && n * c >= extent[2],
                            "{v} {shape:?}: {n} x {c}"
                        );
                    }
                }
                for axis in 0..3 {
                    let e = extent.get(axis).copied().unwrap_or(1);
                    assert!(
                        grid[axis] * per[axis] >= e,
                        "{v} r={r} {shape:?}: {s:?} misses axis {axis}"
                    );
                }
            }
        }
    }
    let tiled = launch_shape(Variant::Conv1dTiled, &[5000], [2047, 0, 0]).unwrap();
    assert_eq!(
        tiled.shared_bytes as usize,
        (1024 + 2 * 2047) * 4,
        "tile plus both halos"
    );
}

/// Grids have at most 65535 blocks in y and z: an array with more row tiles than that is
/// refused with TooLarge (the textbook kernels do not loop over rows), never a bad launch.
#[test]
fn launch_shapes_refuse_too_many_rows() {
    // conv2d_basic: 8 rows per block -> at most 65535 * 8 rows.
    assert!(launch_shape(Variant::Conv2dBasic, &[65_535 * 8, 1], [1, 1, 0]).is_ok());
    match launch_shape(Variant::Conv2dBasic, &[65_535 * 8 + 1, 1], [1, 1, 0]) {
        Err(Error::TooLarge { max, .. }) => assert_eq!(max, 65_535 * 8),
        other => panic!("expected TooLarge, got {other:?}"),
    }
    // conv2d_tiled_in at r = 15: 2 output rows per block.
    assert!(matches!(
        launch_shape(Variant::Conv2dTiledIn, &[65_535 * 2 + 1, 4], [15, 15, 0]),
        Err(Error::TooLarge { .. })
    ));
    // conv3d_const: 4 planes per block.
    assert!(matches!(
        launch_shape(Variant::Conv3dConst, &[65_535 * 4 + 1, 1, 1], [1, 1, 1]),
        Err(Error::TooLarge { .. })
    ));
}

/// Was a host bug: the tiled_in launch shape computed the output tile as `TILE - 2r`
/// without checking the radius: r = 16 divided by zero (panic), r > 16 underflowed. A
/// public function returns MaskTooLarge instead, in 2D and 3D.
#[test]
fn tiled_in_launch_shapes_refuse_a_large_radius() {
    for (v, shape, r) in [
        (Variant::Conv2dTiledIn, &[64usize, 64][..], [16u32, 16, 0]),
        (Variant::Conv2dTiledIn, &[64, 64], [40, 1, 0]),
        (Variant::Conv3dTiledIn, &[9, 9, 9], [4, 4, 4]),
        (Variant::Conv3dTiledIn, &[9, 9, 9], [1, 5, 1]),
    ] {
        match std::panic::catch_unwind(|| launch_shape(v, shape, r)) {
            Ok(Err(Error::MaskTooLarge { .. })) => {}
            Ok(other) => panic!("{v} {r:?}: expected Err(MaskTooLarge), got {other:?}"),
            Err(_) => panic!("{v} {r:?}: launch_shape panicked"),
        }
    }
}

#[test]
fn error_messages_are_useful() {
    let cases: Vec<(Error, &[&str])> = vec![
        (
            Error::NoGpu("no device".into()),
            &["no CUDA GPU", "no device", "reference"],
        ),
        (Error::EmptyInput, &["empty"]),
        (Error::BadMask { shape: vec![2, 2] }, &["[2, 2]", "odd"]),
        (
            Error::ShapeMismatch {
                input: vec![5],
                output: vec![4],
            },
            &["shape", "[5]", "[4]"],
        ),
        (
            Error::TooLarge {
                elements: 3_000_000_000,
                max: 2_147_483_647,
            },
            &["3000000000", "2147483647"],
        ),
        (Error::OutOfMemory { bytes: 1234 }, &["out of memory", "1234"]),
        (Error::UnsupportedDimension { ndim: 4 }, &["4-dimensional", "3D"]),
        (
            Error::MaskDimension { input: 2, mask: 3 },
            &["mask has 3 axes", "input 2"],
        ),
        (
            Error::SharedMemory {
                entry: "conv2d_fast_r3".into(),
                bytes: 300_000,
                reason: "CUDA_ERROR_INVALID_VALUE".into(),
            },
            &["conv2d_fast_r3", "300000", "shared memory", "INVALID_VALUE"],
        ),
        (Error::ProbeTooSmall { got: 3, min: 256 }, &["256", "3"]),
    ];
    for (e, parts) in cases {
        let msg = e.to_string();
        for p in parts {
            assert!(msg.contains(p), "{e:?}: message {msg:?} lacks {p:?}");
        }
    }
}

// ================================================================ on the GPU

#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn empty_input() {
    let gpu = gpu();
    for dim in 1..=3 {
        let m = random_array(IxDyn(&vec![3; dim]), 1);
        for zero_axis in 0..dim {
            let mut shape = vec![4; dim];
            shape[zero_axis] = 0;
            let e = ArrayD::<f32>::zeros(IxDyn(&shape));
            for v in Variant::all_of_dim(dim).chain([Variant::Auto]) {
                let r = gpu.conv(e.view(), m.view(), v);
                assert!(matches!(r, Err(Error::EmptyInput)), "{v} {shape:?}: {r:?}");
            }
            assert!(matches!(gpu.upload(e.view()), Err(Error::EmptyInput)));
            assert!(matches!(gpu.alloc(IxDyn(&shape)), Err(Error::EmptyInput)));
        }
    }
    let msg = gpu
        .conv(
            Array1::<f32>::zeros(0).view(),
            Array1::<f32>::zeros(3).view(),
            Variant::Auto,
        )
        .unwrap_err()
        .to_string();
    assert!(msg.contains("empty"), "{msg}");
}

#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn bad_masks() {
    let gpu = gpu();
    for dim in 1..=3 {
        let n = random_array(IxDyn(&vec![9; dim]), 3);
        for bad_axis in 0..dim {
            for len in [0, 2, 4] {
                let mut shape = vec![3; dim];
                shape[bad_axis] = len;
                let m = random_array(IxDyn(&shape), 5);
                for v in Variant::all_of_dim(dim).chain([Variant::Auto]) {
                    match gpu.conv(n.view(), m.view(), v) {
                        Err(Error::BadMask { shape: s }) => assert_eq!(s, shape, "{v}"),
                        other => panic!("{v}, mask {shape:?}: expected BadMask, got {other:?}"),
                    }
                }
            }
        }
    }
}

#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn mask_too_large_for_the_variant() {
    let gpu = gpu();
    for v in arrays() {
        let (max, why) = v.max_radius();
        let dim = v.dim();
        if (2 * max as u64 + 3).pow(dim as u32) > 50_000_000 {
            continue; // the basic kernels: a mask past 32-bit indexing is gigabytes
        }
        let n = random_array(IxDyn(&vec![6; dim]), 7);
        let k = 2 * (max + 1) + 1;
        let m = if v.family().unwrap().separable {
            // A rank-1 mask, so that the radius is what is refused.
            ndarray::ArrayD::from_elem(IxDyn(&vec![k; dim]), 0.5f32)
        } else {
            random_array(IxDyn(&vec![k; dim]), 9)
        };
        let r = gpu.conv(n.view(), m.view(), v);
        match r {
            Err(Error::MaskTooLarge {
                variant,
                radius,
                max: mx,
                ..
            }) => assert_eq!((variant, radius, mx), (v, max + 1, max)),
            ref other => panic!("{v}: expected MaskTooLarge, got {other:?}"),
        }
        let msg = r.unwrap_err().to_string();
        assert!(
            msg.contains(why) && msg.contains(&(max + 1).to_string()) && msg.contains(v.name()),
            "{v}: {msg:?}"
        );
    }
    // Device API too, and the output buffer is left alone.
    let n1 = random_array(50, 7);
    let dn = gpu.upload(n1.view()).unwrap();
    let sentinel = Array1::from_elem(n1.len(), 42.0f32);
    let mut dp = gpu.upload(sentinel.view()).unwrap();
    let m = random_array(35, 11); // radius 17 > 16
    assert!(matches!(
        gpu.conv_device(&dn, m.view(), Variant::Conv1dFast, &mut dp),
        Err(Error::MaskTooLarge { .. })
    ));
    assert_eq!(dp.to_host().unwrap(), sentinel, "a refused call wrote the output");
}

#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn wrong_dimension_variant_mask_and_array() {
    let gpu = gpu();
    for dim in 1..=3 {
        let n = random_array(IxDyn(&vec![10; dim]), 12);
        let m = random_array(IxDyn(&vec![3; dim]), 13);
        for v in arrays().filter(|v| v.dim() != dim) {
            match gpu.conv(n.view(), m.view(), v) {
                Err(Error::WrongDimension { variant, dim: d }) => assert_eq!((variant, d), (v, dim)),
                other => panic!("{v} on a {dim}D array: expected WrongDimension, got {other:?}"),
            }
        }
        // A mask with another number of axes (dynamic-dimension arrays).
        let m_other = random_array(IxDyn(&vec![3; dim % 3 + 1]), 14);
        match gpu.conv(n.view(), m_other.view(), Variant::Auto) {
            Err(Error::MaskDimension { input, mask }) => assert_eq!((input, mask), (dim, dim % 3 + 1)),
            other => panic!(
                "{dim}D input, {}D mask: expected MaskDimension, got {other:?}",
                dim % 3 + 1
            ),
        }
    }
    let n4 = random_array(IxDyn(&[2, 3, 4, 5]), 15);
    let m4 = random_array(IxDyn(&[1, 1, 1, 1]), 16);
    assert!(matches!(
        gpu.conv(n4.view(), m4.view(), Variant::Auto),
        Err(Error::UnsupportedDimension { ndim: 4 })
    ));
    // Device API: a 1D kernel on a device image.
    let n2 = random_array((10, 12), 17);
    let dn = gpu.upload(n2.view()).unwrap();
    let mut dp = gpu.alloc(n2.dim()).unwrap();
    assert!(matches!(
        gpu.conv_device(&dn, random_array((3, 3), 18).view(), Variant::Conv1dTiled, &mut dp),
        Err(Error::WrongDimension { .. })
    ));
    // A textbook kernel asked for a mode it does not implement.
    assert!(matches!(
        gpu.correlate(
            n2.view(),
            random_array((3, 3), 19).view(),
            Options {
                variant: Variant::Conv2dConst,
                mode: Mode::Wrap
            }
        ),
        Err(Error::ModeUnsupported { .. })
    ));
}

#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn device_api_refuses_mismatched_output() {
    let gpu = gpu();
    let n = random_array((20, 30), 18);
    let m = random_array((3, 3), 19);
    let dn = gpu.upload(n.view()).unwrap();
    // Same element count, other shape, too: (30, 20) and (10, 60).
    for dim in [(30, 20), (10, 60), (20, 31), (19, 30)] {
        let sentinel = Array2::from_elem(dim, 7.0f32);
        let mut dp = gpu.upload(sentinel.view()).unwrap();
        for v in Variant::ALL_2D.into_iter().chain([Variant::Auto]) {
            match gpu.conv_device(&dn, m.view(), v, &mut dp) {
                Err(e @ Error::ShapeMismatch { .. }) => {
                    let msg = e.to_string();
                    assert!(
                        msg.contains("[20, 30]") && msg.contains(&format!("[{}, {}]", dim.0, dim.1)),
                        "{v}: {msg}"
                    );
                }
                other => panic!("{v}, output {dim:?} for input (20, 30): expected ShapeMismatch, got {other:?}"),
            }
        }
        assert_eq!(dp.to_host().unwrap(), sentinel, "a refused call wrote the output");
    }
    assert_eq!(dn.to_host().unwrap(), n, "a refused call wrote the input");
    let n3 = Array::from_elem((4, 5, 6), 1.0f32);
    let d3 = gpu.upload(n3.view()).unwrap();
    let mut o3 = gpu.alloc((4, 6, 5)).unwrap();
    assert!(matches!(
        gpu.conv_device(&d3, random_array((3, 3, 3), 20).view(), Variant::Auto, &mut o3),
        Err(Error::ShapeMismatch { .. })
    ));
    assert!(matches!(
        gpu.copy_device(&d3, &mut o3),
        Err(Error::ShapeMismatch { .. })
    ));
}
