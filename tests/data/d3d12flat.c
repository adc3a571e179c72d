#define INITGUID
#define WIDL_EXPLICIT_AGGREGATE_RETURNS
#define COBJMACROS
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <d3d12.h>
#include <dxgi1_4.h>
#include <d3dcompiler.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
static const char *vsrc = "cbuffer C : register(b0) { float4x4 mvp; }; struct VO { float4 p : SV_Position; float2 uv : TEXCOORD; };\nVO vs(float3 p : POSITION, float2 uv : TEXCOORD) { VO o; o.p = mul(mvp, float4(p,1)); o.uv = uv; return o; }";
static const char *psrc = "Texture2D t : register(t0); Texture2D t2 : register(t1); SamplerState s : register(s0);\nfloat4 ps(float4 p : SV_Position, float2 uv : TEXCOORD) : SV_Target { return float4(uv, 0.5, 1); }";
static LRESULT CALLBACK wp(HWND h, UINT m, WPARAM w, LPARAM l) { if (m == WM_DESTROY) { PostQuitMessage(0); return 0; } return DefWindowProcA(h, m, w, l); }
static void mat_mul(float *r, const float *a, const float *b) { float t[16]; for (int i=0;i<4;i++) for (int j=0;j<4;j++) { t[i*4+j]=0; for(int k=0;k<4;k++) t[i*4+j]+=a[i*4+k]*b[k*4+j]; } memcpy(r,t,sizeof t); }
#define CHK(x) do { HRESULT hr_ = (x); if (FAILED(hr_)) { fprintf(stderr, "%s failed %08lx line %d\n", #x, (unsigned long)hr_, __LINE__); exit(1);} } while(0)
static ID3D12Device *dev;
static ID3D12Resource *buffer(D3D12_HEAP_TYPE ht, UINT64 size, D3D12_RESOURCE_STATES st) {
  D3D12_HEAP_PROPERTIES hp = {0}; hp.Type = ht;
  D3D12_RESOURCE_DESC rd = {0}; rd.Dimension = D3D12_RESOURCE_DIMENSION_BUFFER; rd.Width = size; rd.Height = 1; rd.DepthOrArraySize = 1; rd.MipLevels = 1; rd.SampleDesc.Count = 1; rd.Layout = D3D12_TEXTURE_LAYOUT_ROW_MAJOR;
  ID3D12Resource *r; CHK(ID3D12Device_CreateCommittedResource(dev, &hp, 0, &rd, st, NULL, &IID_ID3D12Resource, (void**)&r)); return r;
}
static void barrier(ID3D12GraphicsCommandList *cl, ID3D12Resource *r, D3D12_RESOURCE_STATES a, D3D12_RESOURCE_STATES b) {
  D3D12_RESOURCE_BARRIER rb = {0}; rb.Type = D3D12_RESOURCE_BARRIER_TYPE_TRANSITION; rb.Transition.pResource = r; rb.Transition.Subresource = D3D12_RESOURCE_BARRIER_ALL_SUBRESOURCES;
  rb.Transition.StateBefore = a; rb.Transition.StateAfter = b; ID3D12GraphicsCommandList_ResourceBarrier(cl, 1, &rb);
}
static D3D12_CPU_DESCRIPTOR_HANDLE cpuh(ID3D12DescriptorHeap *h, int i, UINT inc) { D3D12_CPU_DESCRIPTOR_HANDLE d; h->lpVtbl->GetCPUDescriptorHandleForHeapStart(h, &d); d.ptr += i*inc; return d; }
static D3D12_GPU_DESCRIPTOR_HANDLE gpuh(ID3D12DescriptorHeap *h, int i, UINT inc) { D3D12_GPU_DESCRIPTOR_HANDLE d; h->lpVtbl->GetGPUDescriptorHandleForHeapStart(h, &d); d.ptr += i*inc; return d; }
int main(int argc, char **argv) {
  int frames = argc > 1 ? atoi(argv[1]) : 200; const int W = 640, H = 480;
  WNDCLASSA wc = {0}; wc.lpfnWndProc = wp; wc.hInstance = GetModuleHandleA(NULL); wc.lpszClassName = "c"; RegisterClassA(&wc);
  RECT rc = {0,0,W,H}; AdjustWindowRect(&rc, WS_OVERLAPPEDWINDOW, FALSE);
  HWND hwnd = CreateWindowA("c", "d3d12cube", WS_OVERLAPPEDWINDOW|WS_VISIBLE, 0, 0, rc.right-rc.left, rc.bottom-rc.top, 0, 0, wc.hInstance, 0);
  IDXGIFactory4 *fac; CHK(CreateDXGIFactory2(0, &IID_IDXGIFactory4, (void**)&fac));
  CHK(D3D12CreateDevice(NULL, D3D_FEATURE_LEVEL_11_0, &IID_ID3D12Device, (void**)&dev));
  D3D12_COMMAND_QUEUE_DESC qd = {0}; qd.Type = D3D12_COMMAND_LIST_TYPE_DIRECT;
  ID3D12CommandQueue *q; CHK(ID3D12Device_CreateCommandQueue(dev, &qd, &IID_ID3D12CommandQueue, (void**)&q));
  DXGI_SWAP_CHAIN_DESC1 sd = {0}; sd.Width = W; sd.Height = H; sd.Format = DXGI_FORMAT_R8G8B8A8_UNORM; sd.SampleDesc.Count = 1;
  sd.BufferUsage = DXGI_USAGE_RENDER_TARGET_OUTPUT; sd.BufferCount = 2; sd.SwapEffect = DXGI_SWAP_EFFECT_FLIP_DISCARD;
  IDXGISwapChain1 *sc1; CHK(IDXGIFactory4_CreateSwapChainForHwnd(fac, (IUnknown*)q, hwnd, &sd, NULL, NULL, &sc1));
  IDXGISwapChain3 *sc; CHK(IDXGISwapChain1_QueryInterface(sc1, &IID_IDXGISwapChain3, (void**)&sc));
  UINT rinc = ID3D12Device_GetDescriptorHandleIncrementSize(dev, D3D12_DESCRIPTOR_HEAP_TYPE_RTV);
  UINT sinc = ID3D12Device_GetDescriptorHandleIncrementSize(dev, D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV);
  D3D12_DESCRIPTOR_HEAP_DESC hd = {0}; hd.Type = D3D12_DESCRIPTOR_HEAP_TYPE_RTV; hd.NumDescriptors = 2;
  ID3D12DescriptorHeap *rtvh, *dsvh, *srvh, *cpuuav; CHK(ID3D12Device_CreateDescriptorHeap(dev, &hd, &IID_ID3D12DescriptorHeap, (void**)&rtvh));
  hd.Type = D3D12_DESCRIPTOR_HEAP_TYPE_DSV; hd.NumDescriptors = 1; CHK(ID3D12Device_CreateDescriptorHeap(dev, &hd, &IID_ID3D12DescriptorHeap, (void**)&dsvh));
  hd.Type = D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV; hd.NumDescriptors = 8; hd.Flags = 0; CHK(ID3D12Device_CreateDescriptorHeap(dev, &hd, &IID_ID3D12DescriptorHeap, (void**)&cpuuav));
  hd.Flags = D3D12_DESCRIPTOR_HEAP_FLAG_SHADER_VISIBLE; CHK(ID3D12Device_CreateDescriptorHeap(dev, &hd, &IID_ID3D12DescriptorHeap, (void**)&srvh));
  { D3D12_CPU_DESCRIPTOR_HANDLE c0 = cpuh(srvh,0,sinc); D3D12_GPU_DESCRIPTOR_HANDLE g0 = gpuh(srvh,0,sinc), g1 = gpuh(cpuuav,0,sinc); printf("srvh cpu %llx gpu %llx, cpuuav gpu %llx sinc %u\n", (unsigned long long)c0.ptr, (unsigned long long)g0.ptr, (unsigned long long)g1.ptr, sinc); }
  ID3D12Resource *bb[2];
  for (int i = 0; i < 2; i++) { CHK(IDXGISwapChain3_GetBuffer(sc, i, &IID_ID3D12Resource, (void**)&bb[i])); ID3D12Device_CreateRenderTargetView(dev, bb[i], NULL, cpuh(rtvh, i, rinc)); }
  D3D12_HEAP_PROPERTIES dhp = {0}; dhp.Type = D3D12_HEAP_TYPE_DEFAULT;
  D3D12_RESOURCE_DESC td = {0}; td.Dimension = D3D12_RESOURCE_DIMENSION_TEXTURE2D; td.Width = W; td.Height = H; td.DepthOrArraySize = 1; td.MipLevels = 1;
  td.Format = DXGI_FORMAT_D32_FLOAT; td.SampleDesc.Count = 1; td.Flags = D3D12_RESOURCE_FLAG_ALLOW_DEPTH_STENCIL;
  D3D12_CLEAR_VALUE cv = {0}; cv.Format = DXGI_FORMAT_D32_FLOAT; cv.DepthStencil.Depth = 1.0f;
  ID3D12Resource *depth; CHK(ID3D12Device_CreateCommittedResource(dev, &dhp, 0, &td, D3D12_RESOURCE_STATE_DEPTH_WRITE, &cv, &IID_ID3D12Resource, (void**)&depth));
  ID3D12Device_CreateDepthStencilView(dev, depth, NULL, cpuh(dsvh, 0, 0));
  enum { TS = 64 };
  td.Width = TS; td.Height = TS; td.Format = DXGI_FORMAT_R8G8B8A8_UNORM; td.Flags = 0;
  ID3D12Resource *tex; CHK(ID3D12Device_CreateCommittedResource(dev, &dhp, 0, &td, D3D12_RESOURCE_STATE_COPY_DEST, NULL, &IID_ID3D12Resource, (void**)&tex));
  td.Flags = D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS;
  ID3D12Resource *utex; CHK(ID3D12Device_CreateCommittedResource(dev, &dhp, 0, &td, D3D12_RESOURCE_STATE_UNORDERED_ACCESS, NULL, &IID_ID3D12Resource, (void**)&utex));
  ID3D12Device_CreateShaderResourceView(dev, tex, NULL, cpuh(srvh, 0, sinc));
  ID3D12Device_CreateShaderResourceView(dev, utex, NULL, cpuh(srvh, 1, sinc));
  ID3D12Device_CreateUnorderedAccessView(dev, utex, NULL, NULL, cpuh(srvh, 2, sinc));
  ID3D12Device_CreateUnorderedAccessView(dev, utex, NULL, NULL, cpuh(cpuuav, 0, sinc));
  /* geometry in an upload heap, persistently mapped */
  float v[24*5]; unsigned short idx[36]; static const float n[6][3] = {{1,0,0},{-1,0,0},{0,1,0},{0,-1,0},{0,0,1},{0,0,-1}};
  for (int f=0; f<6; f++) { float nx=n[f][0], ny=n[f][1], nz=n[f][2]; float ux = ny||nz ? 1:0, uy = nx?1:0, uz=0;
    float vx = ny*uz-nz*uy, vy = nz*ux-nx*uz, vz = nx*uy-ny*ux;
    for (int c=0;c<4;c++) { float a = (c==1||c==2)?1:-1, b = (c>=2)?1:-1; float *p = &v[(f*4+c)*5];
      p[0]=nx+a*ux+b*vx; p[1]=ny+a*uy+b*vy; p[2]=nz+a*uz+b*vz; p[3]=(a+1)/2; p[4]=(b+1)/2; }
    unsigned short b0=f*4; unsigned short qq[6]={b0,b0+1,b0+2,b0,b0+2,b0+3}; memcpy(&idx[f*6],qq,sizeof qq); }
  ID3D12Resource *up = buffer(D3D12_HEAP_TYPE_UPLOAD, 65536*2, D3D12_RESOURCE_STATE_GENERIC_READ);
  char *upm; CHK(ID3D12Resource_Map(up, 0, NULL, (void**)&upm));
  memcpy(upm, v, sizeof v); memcpy(upm + 4096, idx, sizeof idx);
  /* constant buffers: 256 bytes per frame slot at 8192 */
  /* texture staging at 65536 */
  D3D12_PLACED_SUBRESOURCE_FOOTPRINT fp; UINT nrows; UINT64 rowsz, total;
  td.Flags = 0; ID3D12Device_GetCopyableFootprints(dev, &td, 0, 1, 65536, &fp, &nrows, &rowsz, &total);
  for (int y=0;y<TS;y++) for (int x=0;x<TS;x++) ((unsigned*)(upm + 65536 + y*fp.Footprint.RowPitch))[x] = ((x/8+y/8)&1) ? 0xff2080e0u : 0xff30e040u ^ (x*4) ^ (y<<12);
  ID3DBlob *vsb, *psb, *err = NULL;
  if (FAILED(D3DCompile(vsrc, strlen(vsrc), "v", NULL, NULL, "vs", "vs_5_0", 0, 0, &vsb, &err))) { fprintf(stderr, "vs: %s\n", (char*)ID3D10Blob_GetBufferPointer(err)); return 1; }
  if (FAILED(D3DCompile(psrc, strlen(psrc), "p", NULL, NULL, "ps", "ps_5_0", 0, 0, &psb, &err))) { fprintf(stderr, "ps: %s\n", (char*)ID3D10Blob_GetBufferPointer(err)); return 1; }
  D3D12_DESCRIPTOR_RANGE dr = {0}; dr.RangeType = D3D12_DESCRIPTOR_RANGE_TYPE_SRV; dr.NumDescriptors = 2; dr.OffsetInDescriptorsFromTableStart = 0;
  D3D12_ROOT_PARAMETER rp[2] = {0};
  rp[0].ParameterType = D3D12_ROOT_PARAMETER_TYPE_CBV; rp[0].Descriptor.ShaderRegister = 0; rp[0].ShaderVisibility = D3D12_SHADER_VISIBILITY_VERTEX;
  rp[1].ParameterType = D3D12_ROOT_PARAMETER_TYPE_DESCRIPTOR_TABLE; rp[1].DescriptorTable.NumDescriptorRanges = 1; rp[1].DescriptorTable.pDescriptorRanges = &dr; rp[1].ShaderVisibility = D3D12_SHADER_VISIBILITY_PIXEL;
  D3D12_STATIC_SAMPLER_DESC ss = {0}; ss.Filter = D3D12_FILTER_MIN_MAG_MIP_LINEAR; ss.AddressU = ss.AddressV = ss.AddressW = D3D12_TEXTURE_ADDRESS_MODE_WRAP; ss.MaxLOD = D3D12_FLOAT32_MAX; ss.ShaderVisibility = D3D12_SHADER_VISIBILITY_PIXEL;
  D3D12_ROOT_SIGNATURE_DESC rsd = {0}; rsd.NumParameters = 2; rsd.pParameters = rp; rsd.NumStaticSamplers = 1; rsd.pStaticSamplers = &ss; rsd.Flags = D3D12_ROOT_SIGNATURE_FLAG_ALLOW_INPUT_ASSEMBLER_INPUT_LAYOUT;
  ID3DBlob *rsb; CHK(D3D12SerializeRootSignature(&rsd, D3D_ROOT_SIGNATURE_VERSION_1, &rsb, &err));
  ID3D12RootSignature *rs; CHK(ID3D12Device_CreateRootSignature(dev, 0, ID3D10Blob_GetBufferPointer(rsb), ID3D10Blob_GetBufferSize(rsb), &IID_ID3D12RootSignature, (void**)&rs));
  D3D12_INPUT_ELEMENT_DESC ie[2] = {{"POSITION",0,DXGI_FORMAT_R32G32B32_FLOAT,0,0,D3D12_INPUT_CLASSIFICATION_PER_VERTEX_DATA,0},{"TEXCOORD",0,DXGI_FORMAT_R32G32_FLOAT,0,12,D3D12_INPUT_CLASSIFICATION_PER_VERTEX_DATA,0}};
  D3D12_GRAPHICS_PIPELINE_STATE_DESC pd = {0};
  pd.pRootSignature = rs; pd.VS.pShaderBytecode = ID3D10Blob_GetBufferPointer(vsb); pd.VS.BytecodeLength = ID3D10Blob_GetBufferSize(vsb);
  pd.PS.pShaderBytecode = ID3D10Blob_GetBufferPointer(psb); pd.PS.BytecodeLength = ID3D10Blob_GetBufferSize(psb);
  pd.BlendState.RenderTarget[0].RenderTargetWriteMask = 0xf; pd.SampleMask = ~0u;
  pd.RasterizerState.FillMode = D3D12_FILL_MODE_SOLID; pd.RasterizerState.CullMode = D3D12_CULL_MODE_NONE; pd.RasterizerState.DepthClipEnable = TRUE;
  pd.DepthStencilState.DepthEnable = TRUE; pd.DepthStencilState.DepthWriteMask = D3D12_DEPTH_WRITE_MASK_ALL; pd.DepthStencilState.DepthFunc = D3D12_COMPARISON_FUNC_LESS;
  pd.InputLayout.pInputElementDescs = ie; pd.InputLayout.NumElements = 2; pd.PrimitiveTopologyType = D3D12_PRIMITIVE_TOPOLOGY_TYPE_TRIANGLE;
  pd.NumRenderTargets = 1; pd.RTVFormats[0] = DXGI_FORMAT_R8G8B8A8_UNORM; pd.DSVFormat = DXGI_FORMAT_D32_FLOAT; pd.SampleDesc.Count = 1;
  ID3D12PipelineState *pso; CHK(ID3D12Device_CreateGraphicsPipelineState(dev, &pd, &IID_ID3D12PipelineState, (void**)&pso));
  ID3D12CommandAllocator *ca[2]; ID3D12GraphicsCommandList *cl;
  for (int i = 0; i < 2; i++) CHK(ID3D12Device_CreateCommandAllocator(dev, D3D12_COMMAND_LIST_TYPE_DIRECT, &IID_ID3D12CommandAllocator, (void**)&ca[i]));
  CHK(ID3D12Device_CreateCommandList(dev, 0, D3D12_COMMAND_LIST_TYPE_DIRECT, ca[0], NULL, &IID_ID3D12GraphicsCommandList, (void**)&cl));
  ID3D12Fence *fence; CHK(ID3D12Device_CreateFence(dev, 0, 0, &IID_ID3D12Fence, (void**)&fence)); UINT64 fv = 0, slotfv[2] = {0,0};
  HANDLE ev = CreateEventA(NULL, FALSE, FALSE, NULL);
  /* initial texture upload */
  D3D12_TEXTURE_COPY_LOCATION dst = {0}, src = {0}; dst.pResource = tex; dst.Type = D3D12_TEXTURE_COPY_TYPE_SUBRESOURCE_INDEX; dst.SubresourceIndex = 0;
  src.pResource = up; src.Type = D3D12_TEXTURE_COPY_TYPE_PLACED_FOOTPRINT; src.PlacedFootprint = fp;
  ID3D12GraphicsCommandList_CopyTextureRegion(cl, &dst, 0, 0, 0, &src, NULL);
  barrier(cl, tex, D3D12_RESOURCE_STATE_COPY_DEST, D3D12_RESOURCE_STATE_PIXEL_SHADER_RESOURCE);
  CHK(ID3D12GraphicsCommandList_Close(cl));
  ID3D12CommandList *lists[1] = {(ID3D12CommandList*)cl}; ID3D12CommandQueue_ExecuteCommandLists(q, 1, lists);
  CHK(ID3D12CommandQueue_Signal(q, fence, ++fv));
  for (int fr = 0; fr < frames; fr++) {
    MSG msg; while (PeekMessageA(&msg, 0, 0, 0, PM_REMOVE)) { TranslateMessage(&msg); DispatchMessageA(&msg); }
    int slot = fr & 1;
    if (ID3D12Fence_GetCompletedValue(fence) < slotfv[slot]) { CHK(ID3D12Fence_SetEventOnCompletion(fence, slotfv[slot], ev)); WaitForSingleObject(ev, INFINITE); }
    UINT bi = IDXGISwapChain3_GetCurrentBackBufferIndex(sc);
    float t = fr * 0.03f, c = cosf(t), s = sinf(t), c2 = cosf(t*0.7f), s2 = sinf(t*0.7f);
    float ry[16] = {c,0,s,0, 0,1,0,0, -s,0,c,0, 0,0,0,1}; float rx[16] = {1,0,0,0, 0,c2,-s2,0, 0,s2,c2,0, 0,0,0,1};
    float f = 1.0f/tanf(0.5f), zn=0.1f, zf=20.f, asp=(float)W/H;
    float pr[16] = {f/asp,0,0,0, 0,f,0,0, 0,0,zf/(zf-zn),-zn*zf/(zf-zn), 0,0,1,0}; float tr[16] = {1,0,0,0, 0,1,0,0, 0,0,1,5, 0,0,0,1};
    float m[16]; mat_mul(m, ry, rx); mat_mul(m, tr, m); mat_mul(m, pr, m);
    float *mt = (float*)(upm + 8192 + slot*256); for (int i=0;i<4;i++) for (int j=0;j<4;j++) mt[j*4+i]=m[i*4+j];
    CHK(ID3D12CommandAllocator_Reset(ca[slot])); CHK(ID3D12GraphicsCommandList_Reset(cl, ca[slot], pso));
    ID3D12DescriptorHeap *heaps[1] = {srvh}; ID3D12GraphicsCommandList_SetDescriptorHeaps(cl, 1, heaps);
    /* compute inside vkd3d: clear a moving band of the UAV texture */
    float uc[4] = {(fr%50)/50.f, 0.2f, 1.0f - (fr%50)/50.f, 1}; float uc2[4] = {0.1f,0.1f,0.1f,1};
    D3D12_RECT full = {0,0,TS,TS}; D3D12_RECT band = {0, (fr*3)%TS, TS, (fr*3)%TS + 8}; if (band.bottom > TS) band.bottom = TS;
    ID3D12GraphicsCommandList_ClearUnorderedAccessViewFloat(cl, gpuh(srvh, 2, sinc), cpuh(cpuuav, 0, sinc), utex, uc2, 1, &full);
    ID3D12GraphicsCommandList_ClearUnorderedAccessViewFloat(cl, gpuh(srvh, 2, sinc), cpuh(cpuuav, 0, sinc), utex, uc, 1, &band);
    barrier(cl, utex, D3D12_RESOURCE_STATE_UNORDERED_ACCESS, D3D12_RESOURCE_STATE_PIXEL_SHADER_RESOURCE);
    barrier(cl, bb[bi], D3D12_RESOURCE_STATE_PRESENT, D3D12_RESOURCE_STATE_RENDER_TARGET);
    D3D12_CPU_DESCRIPTOR_HANDLE rt = cpuh(rtvh, bi, rinc), ds = cpuh(dsvh, 0, 0);
    float clr[4] = {0.1f, 0.1f, 0.2f + 0.1f*(fr%10)/10.f, 1};
    ID3D12GraphicsCommandList_ClearRenderTargetView(cl, rt, clr, 0, NULL);
    ID3D12GraphicsCommandList_ClearDepthStencilView(cl, ds, D3D12_CLEAR_FLAG_DEPTH, 1.0f, 0, 0, NULL);
    ID3D12GraphicsCommandList_OMSetRenderTargets(cl, 1, &rt, FALSE, &ds);
    ID3D12GraphicsCommandList_SetGraphicsRootSignature(cl, rs);
    ID3D12GraphicsCommandList_SetGraphicsRootConstantBufferView(cl, 0, ID3D12Resource_GetGPUVirtualAddress(up) + 8192 + slot*256);
    ID3D12GraphicsCommandList_SetGraphicsRootDescriptorTable(cl, 1, gpuh(srvh, 0, sinc));
    D3D12_VIEWPORT vp = {0,0,W,H,0,1}; D3D12_RECT sr = {0,0,W,H};
    ID3D12GraphicsCommandList_RSSetViewports(cl, 1, &vp); ID3D12GraphicsCommandList_RSSetScissorRects(cl, 1, &sr);
    ID3D12GraphicsCommandList_IASetPrimitiveTopology(cl, D3D_PRIMITIVE_TOPOLOGY_TRIANGLELIST);
    D3D12_VERTEX_BUFFER_VIEW vbv = {ID3D12Resource_GetGPUVirtualAddress(up), sizeof v, 20};
    D3D12_INDEX_BUFFER_VIEW ibv = {ID3D12Resource_GetGPUVirtualAddress(up) + 4096, sizeof idx, DXGI_FORMAT_R16_UINT};
    ID3D12GraphicsCommandList_IASetVertexBuffers(cl, 0, 1, &vbv); ID3D12GraphicsCommandList_IASetIndexBuffer(cl, &ibv);
    ID3D12GraphicsCommandList_DrawIndexedInstanced(cl, 36, 1, 0, 0, 0);
    barrier(cl, bb[bi], D3D12_RESOURCE_STATE_RENDER_TARGET, D3D12_RESOURCE_STATE_PRESENT);
    barrier(cl, utex, D3D12_RESOURCE_STATE_PIXEL_SHADER_RESOURCE, D3D12_RESOURCE_STATE_UNORDERED_ACCESS);
    CHK(ID3D12GraphicsCommandList_Close(cl));
    ID3D12CommandQueue_ExecuteCommandLists(q, 1, lists);
    CHK(IDXGISwapChain3_Present(sc, 0, 0));
    CHK(ID3D12CommandQueue_Signal(q, fence, ++fv)); slotfv[slot] = fv;
  }
  CHK(ID3D12Fence_SetEventOnCompletion(fence, fv, ev)); WaitForSingleObject(ev, INFINITE);
  printf("done %d frames\n", frames);
  IDXGISwapChain3_Release(sc); IDXGISwapChain1_Release(sc1); ID3D12CommandQueue_Release(q); ID3D12Device_Release(dev); DestroyWindow(hwnd); return 0;
}
