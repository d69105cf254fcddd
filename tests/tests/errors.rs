//! Every way a call can fail: the typed `Error`, its message, and that nothing the caller
//! owns changes. The pure functions (mask radius, launch shapes, `Variant::resolve`) are
//! tested without a GPU; the calls on `Gpu` are GPU-gated.
use gpuconv::conv1d::{launch_shape_1d, mask_radius_1d};
use gpuconv::conv2d::{launch_shape_2d, mask_radius_2d, TILE_2D};
use gpuconv::{Error, Variant};
use gpuconv_tests::{gpu, random_array1, random_array2};
use ndarray::{Array1, Array2};

fn all_concrete() -> impl Iterator<Item = Variant> {
    Variant::ALL_1D.into_iter().chain(Variant::ALL_2D)
}

// ================================================================ no GPU needed

#[test]
fn mask_radius_1d_accepts_odd_refuses_empty_and_even() {
    for (len, r) in [(1, 0), (3, 1), (5, 2), (4095, 2047)] {
        let m = Array1::<f32>::zeros(len);
        assert_eq!(mask_radius_1d(&m.view()).unwrap(), r, "{len} taps");
    }
    for len in [0, 2, 4, 4096] {
        let m = Array1::<f32>::zeros(len);
        match mask_radius_1d(&m.view()) {
            Err(Error::BadMask { shape }) => assert_eq!(shape, vec![len]),
            other => panic!("{len} taps: expected BadMask, got {other:?}"),
        }
    }
    let msg = mask_radius_1d(&Array1::<f32>::zeros(4).view()).unwrap_err().to_string();
    assert!(msg.contains("[4]") && msg.contains("odd"), "unhelpful message: {msg}");
}

#[test]
fn mask_radius_2d_accepts_odd_squares_only() {
    for (k, r) in [(1, 0), (3, 1), (5, 2), (63, 31)] {
        let m = Array2::<f32>::zeros((k, k));
        assert_eq!(mask_radius_2d(&m.view()).unwrap(), r, "{k}x{k}");
    }
    for shape in [(0, 0), (2, 2), (4, 4), (3, 5), (5, 3), (1, 3), (3, 0)] {
        let m = Array2::<f32>::zeros(shape);
        match mask_radius_2d(&m.view()) {
            Err(Error::BadMask { shape: s }) => assert_eq!(s, vec![shape.0, shape.1]),
            other => panic!("{shape:?}: expected BadMask, got {other:?}"),
        }
    }
    let msg = mask_radius_2d(&Array2::<f32>::zeros((3, 5)).view())
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("[3, 5]") && msg.contains("equal sides"),
        "unhelpful message: {msg}"
    );
}

#[test]
fn resolve_accepts_up_to_max_radius_and_refuses_beyond() {
    for v in all_concrete() {
        let (max, why) = v.max_radius();
        assert!(!why.is_empty());
        assert_eq!(v.resolve(v.dim(), 0).unwrap(), v);
        assert_eq!(v.resolve(v.dim(), max).unwrap(), v, "{v} at its max radius {max}");
        match v.resolve(v.dim(), max + 1) {
            Err(Error::MaskTooLarge {
                variant,
                radius,
                max: m,
                why: w,
            }) => {
                assert_eq!((variant, radius, m, w), (v, max + 1, max, why));
            }
            other => panic!("{v} radius {}: expected MaskTooLarge, got {other:?}", max + 1),
        }
        let msg = v.resolve(v.dim(), max + 1).unwrap_err().to_string();
        for part in [format!("{}", max + 1), format!("{max}"), why.to_string()] {
            assert!(msg.contains(&part), "{v}: message {msg:?} lacks {part:?}");
        }
        // The variant is named (see error_messages_use_variant_name).
        assert!(
            msg.contains(v.name()) || msg.contains(&format!("{v:?}")),
            "{v}: message {msg:?} does not name the variant"
        );
    }
}

#[test]
fn resolve_max_radii_match_the_documented_limits() {
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
    // The basic kernels index the mask with 32 bits: (2r+1)^d taps <= i32::MAX.
    let b1 = max(Variant::Conv1dBasic);
    let taps1 = 2 * b1 + 1;
    assert!(taps1 <= i32::MAX as usize && taps1 + 2 > i32::MAX as usize, "{b1}");
    let b2 = max(Variant::Conv2dBasic);
    assert!((2 * b2 + 1).pow(2) <= i32::MAX as usize && (2 * b2 + 3).pow(2) > i32::MAX as usize);
}

#[test]
fn resolve_refuses_the_wrong_dimension() {
    for v in Variant::ALL_1D {
        match v.resolve(2, 1) {
            Err(Error::WrongDimension { variant, dim }) => assert_eq!((variant, dim), (v, 2)),
            other => panic!("{v} for 2D: expected WrongDimension, got {other:?}"),
        }
        let msg = v.resolve(2, 1).unwrap_err().to_string();
        assert!(msg.contains("2D"), "{msg}");
    }
    for v in Variant::ALL_2D {
        assert!(
            matches!(v.resolve(1, 1), Err(Error::WrongDimension { dim: 1, .. })),
            "{v}"
        );
        let msg = v.resolve(1, 1).unwrap_err().to_string();
        assert!(msg.contains("1D"), "{msg}");
    }
}

#[test]
fn resolve_auto_picks_fast_then_tiled_then_basic() {
    for r in 0..=16 {
        assert_eq!(Variant::Auto.resolve(1, r).unwrap(), Variant::Conv1dFast, "1D r={r}");
    }
    for r in [17, 100, 2047] {
        assert_eq!(Variant::Auto.resolve(1, r).unwrap(), Variant::Conv1dTiled, "1D r={r}");
    }
    for r in [2048, 100_000] {
        assert_eq!(Variant::Auto.resolve(1, r).unwrap(), Variant::Conv1dBasic, "1D r={r}");
    }
    for r in 0..=8 {
        assert_eq!(Variant::Auto.resolve(2, r).unwrap(), Variant::Conv2dFast, "2D r={r}");
    }
    for r in [9, 15] {
        assert_eq!(Variant::Auto.resolve(2, r).unwrap(), Variant::Conv2dTiledIn, "2D r={r}");
    }
    for r in [16, 31] {
        assert_eq!(Variant::Auto.resolve(2, r).unwrap(), Variant::Conv2dConst, "2D r={r}");
    }
    for r in [32, 1000, 23_169] {
        assert_eq!(Variant::Auto.resolve(2, r).unwrap(), Variant::Conv2dBasic, "2D r={r}");
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
fn variant_names_round_trip_and_display() {
    for v in all_concrete().chain([Variant::Auto]) {
        assert_eq!(Variant::from_name(v.name()), Some(v));
        assert_eq!(v.to_string(), v.name());
    }
    assert_eq!(Variant::from_name("conv3d_basic"), None);
}

#[test]
fn launch_shapes_refuse_the_wrong_dimension() {
    for v in Variant::ALL_2D {
        assert!(
            matches!(launch_shape_1d(v, 1, 100), Err(Error::WrongDimension { dim: 1, .. })),
            "launch_shape_1d({v})"
        );
    }
    for v in Variant::ALL_1D {
        assert!(
            matches!(
                launch_shape_2d(v, 1, (10, 10)),
                Err(Error::WrongDimension { dim: 2, .. })
            ),
            "launch_shape_2d({v})"
        );
    }
}

#[test]
fn launch_shapes_of_auto_are_those_of_the_variant_it_picks() {
    for r in [0, 3, 16, 17, 2047] {
        let v = Variant::Auto.resolve(1, r).unwrap();
        assert_eq!(
            launch_shape_1d(Variant::Auto, r, 5000).unwrap(),
            launch_shape_1d(v, r, 5000).unwrap()
        );
    }
    for r in [0, 4, 8, 9, 31] {
        let v = Variant::Auto.resolve(2, r).unwrap();
        assert_eq!(
            launch_shape_2d(Variant::Auto, r, (300, 200)).unwrap(),
            launch_shape_2d(v, r, (300, 200)).unwrap()
        );
    }
}

/// Shared memory a block may use on sm_90 once the kernel opts in (the host does so
/// above 48 KiB, `gpu::allow_shared`); the textbook kernels stay under the default 48 KiB.
const SM90_MAX_SHARED: u32 = 227 * 1024;

#[test]
fn launch_shapes_cover_every_output() {
    for v in Variant::ALL_1D {
        for r in [0, 1, 16] {
            for len in [1, 3, 1023, 1024, 1025, 100_000] {
                let s = launch_shape_1d(v, r, len).unwrap();
                let threads = s.grid.0 as usize * s.block.0 as usize;
                // The fast kernel computes 4 outputs per thread.
                let outputs = if v == Variant::Conv1dFast { 4 * threads } else { threads };
                assert!(outputs >= len, "{v} r={r} len={len}: {s:?} covers {outputs}");
                assert!(s.block.0 * s.block.1 * s.block.2 <= 1024, "{v}: {s:?}");
                assert!(
                    s.shared_bytes <= 48 * 1024,
                    "{v} r={r}: {s:?} needs opt-in shared memory"
                );
            }
        }
    }
    let tiled = launch_shape_1d(Variant::Conv1dTiled, 2047, 5000).unwrap();
    assert_eq!(
        tiled.shared_bytes as usize,
        (1024 + 2 * 2047) * 4,
        "tile plus both halos"
    );
    for v in Variant::ALL_2D {
        for r in [0, 1, 5, 8] {
            for dim in [(1, 1), (31, 33), (32, 128), (33, 129), (1000, 3)] {
                let s = launch_shape_2d(v, r, dim).unwrap();
                assert!(s.block.0 * s.block.1 * s.block.2 <= 1024, "{v}: {s:?}");
                assert!(s.grid.0 >= 1 && s.grid.1 >= 1, "{v}: {s:?}");
                let limit = if v == Variant::Conv2dFast {
                    SM90_MAX_SHARED
                } else {
                    48 * 1024
                };
                assert!(s.shared_bytes <= limit, "{v} r={r}: {s:?}");
            }
        }
    }
    let s = launch_shape_2d(Variant::Conv2dTiledIn, 15, (64, 64)).unwrap();
    assert_eq!(s.block, (TILE_2D as u32, TILE_2D as u32, 1));
    assert_eq!(s.grid, (32, 32, 1), "output tile 32-2*15 = 2");
}

/// Grids have at most 65535 blocks in y: an image taller than that many row tiles is
/// refused with TooLarge (the kernels do not loop over rows), never a bad launch.
#[test]
fn launch_shape_2d_refuses_too_many_rows() {
    // conv2d_basic: 8 rows per block -> at most 65535 * 8 rows.
    assert!(launch_shape_2d(Variant::Conv2dBasic, 1, (65_535 * 8, 1)).is_ok());
    match launch_shape_2d(Variant::Conv2dBasic, 1, (65_535 * 8 + 1, 1)) {
        Err(Error::TooLarge { max, .. }) => assert_eq!(max, 65_535 * 8),
        other => panic!("expected TooLarge, got {other:?}"),
    }
    // conv2d_tiled_in at r = 15: 2 output rows per block.
    assert!(matches!(
        launch_shape_2d(Variant::Conv2dTiledIn, 15, (65_535 * 2 + 1, 4)),
        Err(Error::TooLarge { .. })
    ));
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
            Error::Shape("input has 5 elements, output 4".into()),
            &["shape", "5", "4"],
        ),
        (
            Error::TooLarge {
                elements: 3_000_000_000,
                max: 2_147_483_647,
            },
            &["3000000000", "2147483647"],
        ),
        (Error::OutOfMemory { bytes: 1234 }, &["out of memory", "1234"]),
    ];
    for (e, parts) in cases {
        let msg = e.to_string();
        for p in parts {
            assert!(msg.contains(p), "{e:?}: message {msg:?} lacks {p:?}");
        }
    }
}

/// `Error::MaskTooLarge` and `Error::WrongDimension` name the variant as PTX entries,
/// benches and tests do (`conv1d_fast`, not the Debug form `Conv1dFast`).
#[test]
fn error_messages_use_variant_name() {
    for v in all_concrete() {
        let (max, _) = v.max_radius();
        let msg = v.resolve(v.dim(), max + 1).unwrap_err().to_string();
        assert!(
            msg.contains(v.name()),
            "MaskTooLarge message {msg:?} lacks {}",
            v.name()
        );
        let msg = v.resolve(3 - v.dim(), 0).unwrap_err().to_string();
        assert!(
            msg.contains(v.name()),
            "WrongDimension message {msg:?} lacks {}",
            v.name()
        );
    }
}

/// Was a host bug: `launch_shape_2d(Conv2dTiledIn, r, ..)` computed the output tile as
/// `TILE_2D - 2 * radius` (host/src/conv2d.rs, `Variant::Conv2dTiledIn` arm) without
/// checking r <= 15: r = 16 divides by zero (panic), r > 16 underflows (panic in debug,
/// a nonsense one-block grid in release). A public function should return MaskTooLarge.
#[test]
fn launch_shape_2d_tiled_in_refuses_large_radius() {
    for r in [16, 17, 40] {
        let got = std::panic::catch_unwind(|| launch_shape_2d(Variant::Conv2dTiledIn, r, (64, 64)));
        match got {
            Ok(Err(Error::MaskTooLarge { .. })) => {}
            Ok(other) => panic!("radius {r}: expected Err(MaskTooLarge), got {other:?}"),
            Err(_) => panic!("radius {r}: launch_shape_2d panicked"),
        }
    }
}

// ================================================================ on the GPU

/// Runs `f`, which must fail, and checks that the caller's arrays are as before.
macro_rules! unchanged {
    ($($a:ident),+ => $call:expr) => {{
        let before = ($($a.clone()),+);
        let r = $call;
        assert_eq!(before, ($($a.clone()),+), "a failed call changed the caller's arrays");
        r
    }};
}

#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn empty_input() {
    let gpu = gpu();
    let m1 = random_array1(3, 1);
    let m2 = random_array2((3, 3), 2);
    let e1 = Array1::<f32>::zeros(0);
    for v in Variant::ALL_1D.into_iter().chain([Variant::Auto]) {
        let r = unchanged!(e1, m1 => gpu.conv1d(e1.view(), m1.view(), v));
        assert!(matches!(r, Err(Error::EmptyInput)), "{v}: {r:?}");
    }
    for shape in [(0, 0), (0, 5), (5, 0)] {
        let e2 = Array2::<f32>::zeros(shape);
        for v in Variant::ALL_2D.into_iter().chain([Variant::Auto]) {
            let r = unchanged!(e2, m2 => gpu.conv2d(e2.view(), m2.view(), v));
            assert!(matches!(r, Err(Error::EmptyInput)), "{v} {shape:?}: {r:?}");
        }
    }
    assert!(matches!(gpu.upload1(e1.view()), Err(Error::EmptyInput)));
    assert!(matches!(gpu.alloc1(0), Err(Error::EmptyInput)));
    assert!(matches!(
        gpu.upload2(Array2::zeros((0, 3)).view()),
        Err(Error::EmptyInput)
    ));
    assert!(matches!(gpu.alloc2((4, 0)), Err(Error::EmptyInput)));
    assert!(gpu
        .conv1d(e1.view(), m1.view(), Variant::Auto)
        .unwrap_err()
        .to_string()
        .contains("empty"));
}

#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn bad_masks() {
    let gpu = gpu();
    let n1 = random_array1(100, 3);
    let n2 = random_array2((20, 30), 4);
    for len in [0, 2, 4] {
        let m = random_array1(len, 5);
        for v in Variant::ALL_1D.into_iter().chain([Variant::Auto]) {
            let r = unchanged!(n1, m => gpu.conv1d(n1.view(), m.view(), v));
            match r {
                Err(Error::BadMask { shape }) => assert_eq!(shape, vec![len], "{v}"),
                other => panic!("{v}, {len} taps: expected BadMask, got {other:?}"),
            }
        }
    }
    for shape in [(0, 0), (2, 2), (3, 5), (5, 3), (4, 3)] {
        let m = random_array2(shape, 6);
        for v in Variant::ALL_2D.into_iter().chain([Variant::Auto]) {
            let r = unchanged!(n2, m => gpu.conv2d(n2.view(), m.view(), v));
            match r {
                Err(Error::BadMask { shape: s }) => assert_eq!(s, vec![shape.0, shape.1], "{v}"),
                other => panic!("{v}, mask {shape:?}: expected BadMask, got {other:?}"),
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
    let n1 = random_array1(50, 7);
    let n2 = random_array2((10, 12), 8);
    for v in Variant::ALL_1D {
        let (max, why) = v.max_radius();
        if max > 100_000 {
            continue; // the basic kernel: a mask past 32-bit indexing is 8 GiB
        }
        let m = random_array1(2 * (max + 1) + 1, 9);
        let r = unchanged!(n1, m => gpu.conv1d(n1.view(), m.view(), v));
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
            msg.contains(&format!("{v:?}")) || msg.contains(v.name()),
            "{v}: {msg:?} does not name the variant"
        );
        assert!(
            msg.contains(why) && msg.contains(&(max + 1).to_string()),
            "{v}: {msg:?}"
        );
    }
    for v in Variant::ALL_2D {
        let (max, why) = v.max_radius();
        if max > 1000 {
            continue;
        }
        let k = 2 * (max + 1) + 1;
        let m = random_array2((k, k), 10);
        let r = unchanged!(n2, m => gpu.conv2d(n2.view(), m.view(), v));
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
            msg.contains(why) && msg.contains(&(max + 1).to_string()),
            "{v}: {msg:?}"
        );
    }
    // Device API too, and the output buffer is left alone.
    let dn = gpu.upload1(n1.view()).unwrap();
    let sentinel = Array1::from_elem(n1.len(), 42.0f32);
    let mut dp = gpu.upload1(sentinel.view()).unwrap();
    let m = random_array1(35, 11); // radius 17 > 16
    assert!(matches!(
        gpu.conv1d_device(&dn, m.view(), Variant::Conv1dFast, &mut dp),
        Err(Error::MaskTooLarge { .. })
    ));
    assert_eq!(dp.to_host().unwrap(), sentinel, "a refused call wrote the output");
}

#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn wrong_dimension_variant() {
    let gpu = gpu();
    let n1 = random_array1(50, 12);
    let m1 = random_array1(3, 13);
    let n2 = random_array2((10, 12), 14);
    let m2 = random_array2((3, 3), 15);
    for v in Variant::ALL_2D {
        let r = unchanged!(n1, m1 => gpu.conv1d(n1.view(), m1.view(), v));
        match r {
            Err(Error::WrongDimension { variant, dim }) => assert_eq!((variant, dim), (v, 1)),
            other => panic!("{v} on a 1D signal: expected WrongDimension, got {other:?}"),
        }
    }
    for v in Variant::ALL_1D {
        let r = unchanged!(n2, m2 => gpu.conv2d(n2.view(), m2.view(), v));
        match r {
            Err(ref e @ Error::WrongDimension { variant, dim }) => {
                assert_eq!((variant, dim), (v, 2));
                assert!(e.to_string().contains("2D"), "{e}");
            }
            other => panic!("{v} on a 2D image: expected WrongDimension, got {other:?}"),
        }
    }
    let dn = gpu.upload2(n2.view()).unwrap();
    let mut dp = gpu.alloc2(n2.dim()).unwrap();
    assert!(matches!(
        gpu.conv2d_device(&dn, m2.view(), Variant::Conv1dTiled, &mut dp),
        Err(Error::WrongDimension { .. })
    ));
}

#[test]
#[cfg_attr(
    not(gpu_present),
    ignore = "no GPU on this machine: GPU test NOT run (run with --include-ignored on a GPU machine)"
)]
fn device_api_refuses_mismatched_output() {
    let gpu = gpu();
    let n1 = random_array1(100, 16);
    let m1 = random_array1(5, 17);
    let dn = gpu.upload1(n1.view()).unwrap();
    for len in [99, 101, 1] {
        let sentinel = Array1::from_elem(len, 7.0f32);
        let mut dp = gpu.upload1(sentinel.view()).unwrap();
        for v in Variant::ALL_1D.into_iter().chain([Variant::Auto]) {
            match gpu.conv1d_device(&dn, m1.view(), v, &mut dp) {
                Err(e @ Error::Shape(_)) => {
                    let msg = e.to_string();
                    assert!(msg.contains("100") && msg.contains(&len.to_string()), "{v}: {msg}");
                }
                other => panic!("{v}, output {len} for input 100: expected Shape, got {other:?}"),
            }
        }
        assert_eq!(dp.to_host().unwrap(), sentinel, "a refused call wrote the output");
    }
    assert_eq!(dn.to_host().unwrap(), n1);

    let n2 = random_array2((20, 30), 18);
    let m2 = random_array2((3, 3), 19);
    let dn = gpu.upload2(n2.view()).unwrap();
    // Same element count, other shape, too: (30, 20) and (10, 60).
    for dim in [(30, 20), (10, 60), (20, 31), (19, 30)] {
        let sentinel = Array2::from_elem(dim, 7.0f32);
        let mut dp = gpu.upload2(sentinel.view()).unwrap();
        for v in Variant::ALL_2D.into_iter().chain([Variant::Auto]) {
            match gpu.conv2d_device(&dn, m2.view(), v, &mut dp) {
                Err(e @ Error::Shape(_)) => {
                    let msg = e.to_string();
                    assert!(
                        msg.contains("(20, 30)") && msg.contains(&format!("{dim:?}")),
                        "{v}: {msg}"
                    );
                }
                other => panic!("{v}, output {dim:?} for input (20, 30): expected Shape, got {other:?}"),
            }
        }
        assert_eq!(dp.to_host().unwrap(), sentinel, "a refused call wrote the output");
    }
    assert_eq!(dn.to_host().unwrap(), n2);
}
