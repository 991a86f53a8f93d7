"""Makes the GPU report an Xid: a kernel stores to virtual address 0 (MMU fault, Xid 31).
The channel is torn down by the driver's robust-channel recovery; the GPU is not reset."""
import ctypes, sys
cu = ctypes.CDLL("libcuda.so.1")
ptx = b"""
.version 7.0
.target sm_80
.address_size 64
.visible .entry bad() { .reg .b64 %rd<2>; .reg .b32 %r<2>; mov.u64 %rd1, 0; mov.u32 %r1, 1; st.global.u32 [%rd1], %r1; ret; }
"""
def ck(r, what):
    print(what, r, file=sys.stderr)
    return r
ctx, dev, mod, fn = ctypes.c_void_p(), ctypes.c_int(), ctypes.c_void_p(), ctypes.c_void_p()
ck(cu.cuInit(0), "cuInit")
ck(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
ck(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
ck(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
ck(cu.cuModuleLoadData(ctypes.byref(mod), ctypes.c_char_p(ptx)), "cuModuleLoadData")
ck(cu.cuModuleGetFunction(ctypes.byref(fn), mod, b"bad"), "cuModuleGetFunction")
ck(cu.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, None, None, None), "cuLaunchKernel")
ck(cu.cuCtxSynchronize(), "cuCtxSynchronize (700 = illegal address expected)")
