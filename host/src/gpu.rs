//! The GPU handle: CUDA context, the embedded PTX module, one stream, the mask symbols,
//! and the one place a kernel is launched.
use crate::error::{Error, Result};
use cust::context::Context;
use cust::device::DeviceAttribute;
use cust::error::CudaError;
use cust::function::{BlockSize, Function, GridSize};
use cust::memory::{CopyDestination, DeviceBuffer};
use cust::module::{Module, ModuleJitOption};
use cust::stream::{Stream, StreamFlags};
use layout::{ConstSymbol, KernelParams, LaunchShape, ParamList};
use std::cell::{Cell, OnceCell, RefCell};
use std::collections::{HashMap, HashSet};
use std::ffi::c_void;
use std::rc::Rc;

/// The PTX of every kernel, built from `kernels-gpu` by `build.rs` (through ptx-builder,
/// which checked it against the kernel-family table).
pub static PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernels.ptx"));

/// The same module assembled by ptxas at build time (empty where the build had no ptxas):
/// loading it skips the driver's JIT of [`PTX`], about a minute on the H200's machine.
pub static CUBIN: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/kernels.cubin"));

/// What [`CUBIN`] is ("sm_90 SASS from ptxas ..."), or why it is empty.
pub static CUBIN_ABOUT: &str = include_str!(concat!(env!("OUT_DIR"), "/kernels.cubin.txt"));

/// Loads the kernels: [`CUBIN`] where it is there, the device runs it and `GPUCONV_JIT`
/// is not `1`; else [`PTX`] through the driver's JIT (any other GPU, or a driver too old
/// for the build's ptxas). Returns the module and which image it came from.
fn load_kernels() -> Result<(Module, String)> {
    let jit = std::env::var("GPUCONV_JIT").is_ok_and(|v| v == "1");
    let why_jit = if jit {
        "GPUCONV_JIT=1".to_string()
    } else if CUBIN.is_empty() {
        format!("no cubin embedded: {CUBIN_ABOUT}")
    } else {
        match Module::from_cubin(CUBIN, &[]) {
            Ok(m) => return Ok((m, CUBIN_ABOUT.to_string())),
            Err(e @ CudaError::OutOfMemory) => return Err(Error::Cuda(e)),
            Err(e) => format!("the device refused the cubin ({CUBIN_ABOUT}): {e}"),
        }
    };
    Ok((
        Module::from_ptx(PTX, &[])?,
        format!("PTX, JIT-compiled by the driver ({why_jit})"),
    ))
}

/// What a family that takes its mask by pointer reads (`MaskLoc::Global`,
/// `MaskLoc::MmaTable`), built from the taps on the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GlobalMask {
    /// The taps themselves (f32).
    Taps,
    /// `image_mma`'s table at this radius and channel count (`image_mma::table`).
    MmaTable(u32, u32),
}

/// The last buffer [`Gpu::global_mask`] uploaded, and what it was built from.
struct GlobalBuffer {
    kind: GlobalMask,
    taps: Vec<f32>,
    buf: DeviceBuffer<u32>,
}

/// A module of one entry with its mask's taps baked into its code (`ptx_builder::bake`),
/// and what its own `TILE_MAP` symbol describes.
pub(crate) struct BakedModule {
    module: Module,
    tile_map: RefCell<Option<TileMap>>,
    /// Unique among this context's modules (the embedded one is 0).
    id: usize,
}

impl BakedModule {
    /// The module as the place a launch runs.
    pub(crate) fn code(&self) -> Code<'_> {
        Code {
            module: &self.module,
            tile_map: &self.tile_map,
            id: self.id,
        }
    }
}

/// A baked module's entry and taps (bit for bit).
type BakeKey = (String, Vec<u32>);

/// The driver JIT's options for a module built at optimization level `level` (0 to 4):
/// none at the driver's default ([`layout::family::DEFAULT_JIT_LEVEL`]).
fn jit_options(level: u32) -> Vec<ModuleJitOption> {
    use cust::module::OptLevel;
    let level = match level {
        0 => OptLevel::O0,
        1 => OptLevel::O1,
        2 => OptLevel::O2,
        3 => OptLevel::O3,
        _ => return Vec::new(),
    };
    vec![ModuleJitOption::OptLevel(level)]
}

/// A hash of a [`BakeKey`], for counting launches before a mask is baked (a collision only
/// bakes a mask one launch early).
fn seen_key(key: &BakeKey) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault};
    BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default().hash_one(key)
}

/// Masks launched once (not yet baked) remembered at once; one more forgets them all.
const MAX_SEEN: usize = 4096;

/// The module a launch runs in: the embedded one, or a baked one, with its `TILE_MAP`
/// state and an identity for the per-function caches.
#[derive(Clone, Copy)]
pub(crate) struct Code<'a> {
    module: &'a Module,
    tile_map: &'a RefCell<Option<TileMap>>,
    id: usize,
}

/// A CUDA context with the convolution module loaded. Create one and reuse it: module
/// load is the slow part (a fraction of a second from the embedded cubin, about a minute
/// where the driver JITs the PTX and its cache does not hold it). Device arrays borrow
/// it, so none outlives the context that owns its memory.
pub struct Gpu {
    // Field order is drop order: module and buffers go before the context.
    module: Module,
    stream: Stream,
    /// Last taps uploaded to each `.const` symbol, so pipelines skip repeat uploads.
    const_masks: RefCell<HashMap<&'static str, Vec<f32>>>,
    /// Device buffer of the families that take the mask by pointer, with what it was
    /// built from (so a repeat launch neither rebuilds nor uploads it).
    global_mask: RefCell<Option<GlobalBuffer>>,
    /// The two words entries that hand out their tiles by a counter take them from
    /// (`ConvArgs::tile_counter`): zeroed here, and set back to 0 by each such launch as
    /// it ends. One pair serves every launch, as they run one at a time on `stream`.
    tile_counter: DeviceBuffer<u32>,
    /// Streaming multiprocessors, for sizing persistent grids.
    sm_count: u32,
    /// At most this many blocks in a persistent grid, where set ([`Gpu::limit_persistent_grid`]).
    persistent_limit: Cell<Option<u32>>,
    /// Blocks per SM of each (module, entry, shared bytes) that needed preparing (see
    /// `prepare`).
    occupancy: RefCell<HashMap<(usize, String, u32), u32>>,
    /// The shared memory each entry is opted in to (above 48 KiB): the most any launch of
    /// it asked. One attribute a function, so an entry whose launches differ (an image
    /// family's f32 and u8) keeps the largest, rather than the last, size.
    shared_allowed: RefCell<HashMap<(usize, String), u32>>,
    /// What the `TILE_MAP` symbol describes now (see [`Gpu::set_tile_map`]).
    tile_map: RefCell<Option<TileMap>>,
    /// The driver's cuTensorMapEncodeTiled, looked up once ([`encode_tiled`]).
    encode_tiled: Option<EncodeTiled>,
    /// Whether launches of the fast families run in modules with their taps baked in.
    bake: Cell<bool>,
    /// Baked modules by entry and taps (bit for bit).
    baked: RefCell<HashMap<BakeKey, Rc<BakedModule>>>,
    /// Launches so far of each entry and taps not yet baked: a mask is baked on its
    /// second launch, so one-off masks never pay the JIT.
    bake_seen: RefCell<HashMap<u64, u32>>,
    /// Entries whose baked module the driver would not load: they read the symbol.
    bake_failed: RefCell<HashSet<String>>,
    /// Launches that ran in a baked module.
    baked_launches: Cell<u64>,
    /// The embedded PTX split into its items once, on the first bake.
    ptx_items: OnceCell<ptx_builder::bake::Ptx<'static>>,
    /// Baked modules built so far (the next one's id).
    baked_built: Cell<usize>,
    /// What [`Gpu::median_us`] launches before each start event to hold the stream busy
    /// (`Gpu::hold_timing`): the FMA probe's output buffer and its loop trips.
    pub(crate) hold: RefCell<Option<(DeviceBuffer<f32>, u32)>>,
    /// Which image of the kernels [`load_kernels`] loaded, in words.
    image: String,
    _ctx: Context,
}

/// A tensor map of a launch's input for the entries that stage tiles with tensor copies
/// (`layout::tile_map`): the tensor's address, its element type (f32, or u8 rows read 2
/// bytes an element), its extents (elements across, rows, planes), the bytes between rows
/// and between planes, and the box one copy reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TileMap {
    pub input: u64,
    pub element: MapElement,
    pub dims: [u64; 3],
    pub strides: [u64; 2],
    pub boxed: [u32; 3],
}

/// The element a [`TileMap`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MapElement {
    F32,
    /// Two bytes of a u8 row (`layout::tile_map::BYTE_ELEMENT`).
    U16,
}

impl MapElement {
    /// CUtensorMapDataType: CU_TENSOR_MAP_DATA_TYPE_FLOAT32, _UINT16.
    fn data_type(self) -> u32 {
        match self {
            MapElement::F32 => 7,
            MapElement::U16 => 1,
        }
    }
}

/// cuTensorMapEncodeTiled (CUDA 12's driver API; cust 0.3's bindings predate it): the
/// map, data type, rank, address, extents, strides, box, element strides, interleave,
/// swizzle, L2 promotion, out-of-bounds fill. Returns a CUresult code.
type EncodeTiled = unsafe extern "C" fn(
    *mut [u64; 16],
    u32,
    u32,
    *mut c_void,
    *const u64,
    *const u64,
    *const u32,
    *const u32,
    u32,
    u32,
    u32,
    u32,
) -> u32;

/// The driver's cuTensorMapEncodeTiled, looked up by name (cuGetProcAddress), or `None`
/// where the driver has none.
fn encode_tiled() -> Option<EncodeTiled> {
    use cust::sys::{cuGetProcAddress, CUresult};
    let mut f: *mut c_void = std::ptr::null_mut();
    let name = c"cuTensorMapEncodeTiled";
    // SAFETY: a NUL-terminated name and a place for the pointer; CUDA 12.0's entry.
    let r = unsafe { cuGetProcAddress(name.as_ptr(), &mut f, 12000, 0) };
    if r != CUresult::CUDA_SUCCESS || f.is_null() {
        return None;
    }
    // SAFETY: the driver's cuTensorMapEncodeTiled has this signature (cuda.h, 12.0).
    Some(unsafe { std::mem::transmute::<*mut c_void, EncodeTiled>(f) })
}

impl Gpu {
    /// Initializes CUDA on device 0 and loads the kernels. `Err(Error::NoGpu)` when the
    /// machine has no usable CUDA device.
    pub fn new() -> Result<Gpu> {
        let ctx = cust::quick_init().map_err(|e| Error::NoGpu(e.to_string()))?;
        let (module, image) = load_kernels()?;
        // A blocking stream: the synchronous symbol copies on the legacy default stream
        // wait for kernels still reading the previous mask.
        let stream = Stream::new(StreamFlags::DEFAULT, None)?;
        let sm_count = cust::device::Device::get_device(0)?.get_attribute(DeviceAttribute::MultiprocessorCount)? as u32;
        Ok(Gpu {
            module,
            stream,
            const_masks: RefCell::new(HashMap::new()),
            global_mask: RefCell::new(None),
            tile_counter: DeviceBuffer::zeroed(2).map_err(|e| oom(e, 8))?,
            sm_count,
            persistent_limit: Cell::new(None),
            occupancy: RefCell::new(HashMap::new()),
            shared_allowed: RefCell::new(HashMap::new()),
            tile_map: RefCell::new(None),
            encode_tiled: encode_tiled(),
            bake: Cell::new(std::env::var("GPUCONV_BAKE").map_or(true, |v| v != "0")),
            baked: RefCell::new(HashMap::new()),
            bake_seen: RefCell::new(HashMap::new()),
            bake_failed: RefCell::new(HashSet::new()),
            baked_launches: Cell::new(0),
            ptx_items: OnceCell::new(),
            baked_built: Cell::new(0),
            hold: RefCell::new(None),
            image,
            _ctx: ctx,
        })
    }

    /// Which image of the kernels runs: the embedded cubin ("sm_90 SASS from ptxas ...")
    /// or the PTX through the driver's JIT, and why.
    pub fn kernel_image(&self) -> &str {
        &self.image
    }

    /// The device's architecture as ptxas names it, e.g. "sm_90" on the H200.
    pub fn arch(&self) -> Result<String> {
        let d = cust::device::Device::get_device(0)?;
        let major = d.get_attribute(DeviceAttribute::ComputeCapabilityMajor)?;
        let minor = d.get_attribute(DeviceAttribute::ComputeCapabilityMinor)?;
        Ok(format!("sm_{major}{minor}"))
    }

    /// The device's name, e.g. "NVIDIA H200".
    pub fn device_name(&self) -> Result<String> {
        Ok(cust::device::Device::get_device(0)?.name()?)
    }

    /// Device address of the launches' tile counter (`ConvArgs::tile_counter`).
    pub(crate) fn tile_counter(&self) -> u64 {
        self.tile_counter.as_device_ptr().as_raw()
    }

    /// Streaming multiprocessors of the device.
    pub(crate) fn sm_count(&self) -> u32 {
        self.sm_count
    }

    /// The stream every launch goes to (for timing with events).
    pub fn stream(&self) -> &Stream {
        &self.stream
    }

    /// Waits for every launch so far.
    pub fn synchronize(&self) -> Result<()> {
        Ok(self.stream.synchronize()?)
    }

    /// Copies `taps` into a `__constant__` symbol (cudaMemcpyToSymbol), zero-padded to the
    /// symbol's length. Skipped when the symbol already holds these taps.
    pub(crate) fn set_const_mask(&self, sym: ConstSymbol, taps: &[f32]) -> Result<()> {
        let mut cache = self.const_masks.borrow_mut();
        if cache.get(sym.name).is_some_and(|t| t.as_slice() == taps) {
            return Ok(());
        }
        assert!(taps.len() <= sym.len, "the mask was checked against the symbol");
        // Kernels still running may read the old mask.
        self.stream.synchronize()?;
        self.copy_symbol(sym, taps)?;
        cache.insert(sym.name, taps.to_vec());
        Ok(())
    }

    /// The embedded module, with every entry.
    pub(crate) fn main_code(&self) -> Code<'_> {
        Code {
            module: &self.module,
            tile_map: &self.tile_map,
            id: 0,
        }
    }

    /// Baked modules kept at once; one more drops them all (each is one entry, JIT-compiled
    /// once per mask).
    pub const MAX_BAKED: usize = 32;

    /// Whether launches of the fast families' compiled-radius entries run with their taps
    /// baked into the code (on unless the environment sets `GPUCONV_BAKE=0`).
    pub fn baked_taps(&self) -> bool {
        self.bake.get()
    }

    /// Turns baked taps on or off for the launches that follow. Off, every entry reads its
    /// mask from the `__constant__` symbol. On, the second launch of an entry with the
    /// same mask JIT-compiles a module of that entry with the taps as immediates (0.2–0.4 s
    /// for `conv2d_fast_r4`, 0.4–0.6 s for `conv3d_fast_r3` on the H200), and every launch
    /// after it runs there; the modules are kept, up to [`Gpu::MAX_BAKED`]. Results are
    /// the same bit for bit: the FMAs and their order do not change.
    pub fn set_baked_taps(&self, on: bool) {
        self.bake.set(on);
    }

    /// Caps the grids of persistent launches (whose blocks loop over the tiles, one wave
    /// of the occupancy's blocks an SM) at `blocks`, or lifts the cap (`None`). Results do
    /// not change, only how many tiles each block takes: a checking tool (compute-sanitizer)
    /// can then run many tiles a block, and the counter that hands them out, on an input
    /// small enough for it. `Some(0)` counts as 1.
    pub fn limit_persistent_grid(&self, blocks: Option<u32>) {
        self.persistent_limit.set(blocks.map(|b| b.max(1)));
    }

    /// Baked modules held now.
    pub fn baked_modules(&self) -> usize {
        self.baked.borrow().len()
    }

    /// Launches so far that ran in a baked module.
    pub fn baked_launches(&self) -> u64 {
        self.baked_launches.get()
    }

    /// The module of `entry` with `taps` (the contents of `sym`) baked in, built by the
    /// driver's JIT at `jit_level` (`layout`'s `Entry::baked_jit_level`) and loaded on the
    /// second launch with these taps; `None` on the first, where baking is off, or where
    /// the rewrite left a tap load or the driver refused the module (the launch then reads
    /// the symbol).
    pub(crate) fn baked(
        &self,
        entry: &str,
        sym: ConstSymbol,
        taps: &[f32],
        jit_level: u32,
    ) -> Result<Option<Rc<BakedModule>>> {
        if !self.bake.get() || self.bake_failed.borrow().contains(entry) {
            return Ok(None);
        }
        let key = (
            entry.to_string(),
            taps.iter().map(|t| t.to_bits()).collect::<Vec<u32>>(),
        );
        if let Some(b) = self.baked.borrow().get(&key) {
            self.baked_launches.set(self.baked_launches.get() + 1);
            return Ok(Some(b.clone()));
        }
        {
            let mut seen = self.bake_seen.borrow_mut();
            if seen.len() >= MAX_SEEN {
                seen.clear();
            }
            let k = seen_key(&key);
            let n = seen.entry(k).or_insert(0);
            *n += 1;
            if *n < 2 {
                return Ok(None);
            }
            seen.remove(&k);
        }
        let loaded = (self.ptx_items.get_or_init(|| ptx_builder::bake::Ptx::parse(PTX)))
            .bake_entry(entry, sym.name, taps)
            .filter(ptx_builder::bake::Baked::complete)
            .map(|b| Module::from_ptx(&b.ptx, &jit_options(jit_level)));
        let module = match loaded {
            Some(Ok(m)) => m,
            Some(Err(e @ CudaError::OutOfMemory)) => return Err(Error::Cuda(e)),
            Some(Err(_)) | None => {
                self.bake_failed.borrow_mut().insert(entry.to_string());
                return Ok(None);
            }
        };
        let mut cache = self.baked.borrow_mut();
        if cache.len() >= Self::MAX_BAKED {
            // Kernels still running may be in the modules dropped; their functions' entries
            // in the per-function caches go with them.
            self.stream.synchronize()?;
            cache.clear();
            self.occupancy.borrow_mut().retain(|k, _| k.0 == 0);
            self.shared_allowed.borrow_mut().retain(|k, _| k.0 == 0);
        }
        self.baked_built.set(self.baked_built.get() + 1);
        let b = Rc::new(BakedModule {
            module,
            tile_map: RefCell::new(None),
            id: self.baked_built.get(),
        });
        cache.insert(key, b.clone());
        self.baked_launches.set(self.baked_launches.get() + 1);
        Ok(Some(b))
    }

    /// Fills the `TILE_MAP` symbol with a tensor map of `m` (out-of-bounds cells zero),
    /// skipped when it holds that map already. `Ok(false)` where the driver cannot
    /// encode it (no such entry, or a geometry it refuses): the kernel then stages its
    /// tiles with copies.
    pub(crate) fn set_tile_map(&self, code: Code<'_>, m: TileMap) -> Result<bool> {
        if *code.tile_map.borrow() == Some(m) {
            return Ok(true);
        }
        let Some(encode) = self.encode_tiled else {
            return Ok(false);
        };
        let mut map = [0u64; 16];
        // Every element of the box (element strides 1).
        let elem = [1u32; 3];
        // SAFETY: every pointer is to a live array of the length the rank (3) asks for;
        // the driver only writes the 128-byte map. Interleave, swizzle and OOB fill are
        // NONE (0: zeros); L2 promotion 128B (2).
        let r = unsafe {
            encode(
                &mut map,
                m.element.data_type(),
                3,
                m.input as *mut c_void,
                m.dims.as_ptr(),
                m.strides.as_ptr(),
                m.boxed.as_ptr(),
                elem.as_ptr(),
                0,
                0,
                2,
                0,
            )
        };
        if r != 0 {
            return Ok(false);
        }
        // Kernels still running may read the old map.
        self.stream.synchronize()?;
        *code.tile_map.borrow_mut() = None;
        let name = std::ffi::CString::new(layout::tile_map::SYMBOL).expect("no NUL");
        code.module.get_global::<[u64; 16]>(&name)?.copy_from(&map)?;
        *code.tile_map.borrow_mut() = Some(m);
        Ok(true)
    }

    /// The buffer `kind` builds from `taps`, on the device, for the families that take
    /// the mask by pointer. The last one is kept: a launch with the same kind and taps
    /// (bit for bit) reuses it without building it again. Returns its device address,
    /// 256-byte aligned (cuMemAlloc's).
    pub(crate) fn global_mask(&self, kind: GlobalMask, taps: &[f32]) -> Result<u64> {
        let mut cache = self.global_mask.borrow_mut();
        if let Some(g) = cache.as_ref() {
            if g.kind == kind && g.taps.iter().map(|t| t.to_bits()).eq(taps.iter().map(|t| t.to_bits())) {
                return Ok(g.buf.as_device_ptr().as_raw());
            }
        }
        let words = match kind {
            GlobalMask::Taps => taps.iter().map(|t| t.to_bits()).collect(),
            GlobalMask::MmaTable(r, c) => crate::image_mma::table(taps, r, c),
        };
        // Kernels still running may read the old buffer.
        self.stream.synchronize()?;
        *cache = None;
        let buf = DeviceBuffer::from_slice(&words).map_err(|e| oom(e, std::mem::size_of_val(words.as_slice())))?;
        let addr = buf.as_device_ptr().as_raw();
        *cache = Some(GlobalBuffer {
            kind,
            taps: taps.to_vec(),
            buf,
        });
        Ok(addr)
    }

    /// Readies `entry` for launches of `shape`'s block and shared memory: opts in to
    /// shared memory above 48 KiB (once per larger size), and returns the blocks per SM
    /// (occupancy, once per (entry, shared bytes)), which sizes persistent grids.
    fn prepare(&self, id: usize, entry: &str, f: &Function<'_>, shape: &LaunchShape) -> Result<u32> {
        if shape.shared_bytes > DEFAULT_SHARED_LIMIT {
            let mut allowed = self.shared_allowed.borrow_mut();
            let at = allowed.entry((id, entry.to_string())).or_insert(0);
            if *at < shape.shared_bytes {
                allow_shared(entry, f, shape.shared_bytes)?; // occupancy counts only what is allowed
                *at = shape.shared_bytes;
            }
        }
        let key = (id, entry.to_string(), shape.shared_bytes);
        if let Some(&n) = self.occupancy.borrow().get(&key) {
            return Ok(n);
        }
        let b = shape.block;
        let n = f.max_active_blocks_per_multiprocessor(BlockSize::xyz(b.0, b.1, b.2), shape.shared_bytes as usize)?;
        self.occupancy.borrow_mut().insert(key, n);
        Ok(n)
    }

    /// Launches `entry` of `code`, which takes the argument struct `params`, with `shape`
    /// and `args`, asynchronously on [`Gpu::stream`]. This is the one place a kernel is
    /// launched.
    ///
    /// Callers build `args` from device arrays they borrow and whose shapes they have
    /// checked against the launch (`conv::run`, `roofline::launch_fma_probe`): every
    /// address in `args` is a live allocation of this context covering what the kernel
    /// reads and writes.
    pub(crate) fn launch<A: KernelParams>(
        &self,
        code: Code<'_>,
        entry: &str,
        params: ParamList,
        shape: LaunchShape,
        args: &A,
    ) -> Result<()> {
        assert_eq!(A::LIST, params, "{entry} takes {params:?}, not {:?}", A::LIST);
        let f = code.module.get_function(entry)?;
        let mut g = shape.grid;
        if shape.persistent || shape.depth.is_some() || shape.shared_bytes > DEFAULT_SHARED_LIMIT {
            let per_sm = self.prepare(code.id, entry, &f, &shape)?;
            if shape.persistent {
                // One wave, no tail: the blocks loop over the tiles.
                let wave = per_sm.max(1) * self.sm_count;
                g.0 = g.0.min(self.persistent_limit.get().map_or(wave, |cap| cap.min(wave)));
            }
            if let Some(depth) = shape.depth {
                // Chunks of depth that fill the last wave of blocks.
                g.2 = depth.grid_depth(g.0 * g.1, per_sm.max(1) * self.sm_count);
            }
        }
        let b = shape.block;
        let arg = args as *const A as *mut c_void;
        // SAFETY: the entry's one parameter is the `#[repr(C)]` struct `A` (its table row
        // says `params`, checked equal to `A::LIST` above, and ptx-builder checked the
        // PTX declares that parameter with `A`'s size and alignment; a baked module's
        // entry is that PTX's with only tap loads rewritten), so the driver copies
        // exactly `A`'s bytes from `arg`, which outlives this call. The device addresses
        // in it are live buffers of this context that cover everything the kernel touches
        // (the caller's contract above) and stay alive until the kernel completes: device
        // memory is freed only by cuMemFree, which waits for pending work.
        unsafe {
            self.stream.launch(
                &f,
                GridSize::xyz(g.0, g.1, g.2),
                BlockSize::xyz(b.0, b.1, b.2),
                shape.shared_bytes,
                &[arg],
            )?;
        }
        Ok(())
    }
}

macro_rules! copy_symbol_by_name {
    ($($name:ident: $ty:ident = $len:literal;)*) => {
        impl Gpu {
            /// Copies `taps`, zero-padded, into the symbol (cuModuleGetGlobal + a copy of
            /// the symbol's whole length, typed by the symbol list).
            fn copy_symbol(&self, sym: ConstSymbol, taps: &[f32]) -> Result<()> {
                match sym.name {
                    $(stringify!($name) => {
                        let mut padded = vec![0.0f32; $len];
                        padded[..taps.len()].copy_from_slice(taps);
                        let padded: Box<[f32; $len]> = padded.into_boxed_slice().try_into().expect("length");
                        let name = std::ffi::CString::new(stringify!($name)).expect("no NUL");
                        self.module.get_global::<[f32; $len]>(&name)?.copy_from(&*padded)?;
                        Ok(())
                    })*
                    other => unreachable!("{other} is not a mask symbol of the table"),
                }
            }
        }
    };
}
layout::with_const_masks!(copy_symbol_by_name);

/// Dynamic shared memory a kernel may use without opting in (48 KiB).
const DEFAULT_SHARED_LIMIT: u32 = 48 * 1024;

/// Opts `f` in to `bytes` of dynamic shared memory (cudaFuncSetAttribute with
/// MaxDynamicSharedMemorySize), which launches above 48 KiB need; cust has no wrapper.
fn allow_shared(entry: &str, f: &Function<'_>, bytes: u32) -> Result<()> {
    use cust::sys::{cuFuncSetAttribute, CUfunction_attribute, CUresult};
    // SAFETY: `f` is a live function handle of this context's module.
    let r = unsafe {
        cuFuncSetAttribute(
            f.to_raw(),
            CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            bytes as i32,
        )
    };
    match r {
        CUresult::CUDA_SUCCESS => Ok(()),
        r => Err(Error::SharedMemory {
            entry: entry.to_string(),
            bytes,
            reason: format!("{r:?}"),
        }),
    }
}

/// Allocates `len` floats on the device, reporting out-of-memory as such.
pub(crate) fn alloc(len: usize) -> Result<DeviceBuffer<f32>> {
    // SAFETY: f32 has no invalid bit patterns; every kernel writes its whole output
    // before anything reads it.
    unsafe { DeviceBuffer::uninitialized(len) }.map_err(|e| oom(e, len * 4))
}

/// A failed allocation of `bytes` as [`Error::OutOfMemory`], other errors as they are.
pub(crate) fn oom(e: CudaError, bytes: usize) -> Error {
    match e {
        CudaError::OutOfMemory => Error::OutOfMemory { bytes },
        e => Error::Cuda(e),
    }
}
