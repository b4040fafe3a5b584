#!/usr/bin/python3
"""Emulates the three kernels of src/backend/cuda/attention.cu in NumPy, block by block and warp by warp
(the same tile sizes, loop bounds, masks, shared-memory tiles and per-thread ownership of the dK/dV tile),
in float32, and compares them with a direct float64 attention on shapes with T = 1 … 70, Tq != Tk, d = 1 … 128,
causal and padding masks and fully masked rows.

It checks the algorithm and its index arithmetic without a GPU; it cannot check the CUDA itself
(barriers, shuffles, launch limits): only tests/gpu/test_cuda_kernels.cpp on a device does. About 10 seconds
(Python loops over blocks and threads). Errors are normwise, against max(max|ref|, 1) (docs/cuda.md).

  /usr/bin/python3 tests/gpu/emulate_attention.py [SEED]
"""
import math
import sys

import numpy as np
W=32; KEYS=32; MAXD=128; WARPS=4; FR=4*WARPS; DQR=2*WARPS

def ref(q,k,v,key_len,causal,B,Tq,Tk,C,H,dout):
    d=C//H; out=np.zeros((B,Tq,C)); lse=np.full((B,H,Tq),-np.inf)
    dq=np.zeros((B,Tq,C)); dk=np.zeros((B,Tk,C)); dv=np.zeros((B,Tk,C))
    for b in range(B):
        valid = Tk if key_len is None else max(0,min(key_len[b],Tk))
        for h in range(H):
            sl=slice(h*d,(h+1)*d)
            Q=q[b,:,sl].astype(np.float64); K=k[b,:,sl].astype(np.float64); V=v[b,:,sl].astype(np.float64); G=dout[b,:,sl].astype(np.float64)
            S=Q@K.T/math.sqrt(d)
            mask=np.zeros((Tq,Tk),bool)
            for i in range(Tq):
                lim=min(valid,i+1) if causal else valid
                mask[i,:max(0,lim)]=True
            S=np.where(mask,S,-np.inf)
            P=np.zeros_like(S)
            for i in range(Tq):
                if mask[i].any():
                    m=S[i].max(); e=np.exp(S[i]-m); e[~mask[i]]=0; P[i]=e/e.sum(); lse[b,h,i]=m+math.log(e.sum())
            O=P@V; out[b,:,sl]=O
            dP=G@V.T; D=(G*O).sum(1,keepdims=True); dS=P*(dP-D)
            dv[b,:,sl]=P.T@G; dq[b,:,sl]=dS@K/math.sqrt(d); dk[b,:,sl]=dS.T@Q/math.sqrt(d)
    return out,lse,dq,dk,dv

f32=np.float32
def emu_forward(q,k,v,key_len,causal,B,Tq,Tk,C,H):
    d=C//H; out=np.full(B*Tq*C,np.nan,f32); lse=np.full(B*H*Tq,np.nan,f32)
    qf=q.reshape(-1); kf=k.reshape(-1); vf=v.reshape(-1)
    qblocks=(Tq+FR-1)//FR; scale=f32(1.0/math.sqrt(d))
    for blk in range(B*H*qblocks):
        bh=blk//qblocks; i0=(blk%qblocks)*FR; b=bh//H; h=bh%H
        qbase=b*Tq*C+h*d; kbase=b*Tk*C+h*d
        kl=Tk if key_len is None else key_len[b]; valid=0 if kl<0 else min(kl,Tk)
        rows=min(FR,Tq-i0)
        Qs=np.zeros((FR,MAXD),f32)
        for e in range(FR*d):
            r,c=divmod(e,d); Qs[r,c]=qf[qbase+(i0+r)*C+c] if r<rows else 0
        m=np.full((WARPS,4),-np.inf,f32); l=np.zeros((WARPS,4),f32); o=np.zeros((WARPS,4,MAXD),f32)
        kend=min(valid,min(Tk,i0+rows)) if causal else valid
        for j0 in range(0,kend,KEYS):
            cols=min(KEYS,kend-j0)
            Ks=np.zeros((KEYS,MAXD+1),f32); Vs=np.zeros((KEYS,MAXD),f32)
            for e in range(KEYS*d):
                j,c=divmod(e,d)
                if j<cols: Ks[j,c]=kf[kbase+(j0+j)*C+c]; Vs[j,c]=vf[kbase+(j0+j)*C+c]
            for w in range(WARPS):
                for rr in range(4):
                    r=w*4+rr
                    if r>=rows: continue
                    lim=min(valid,i0+r+1) if causal else valid
                    vis=min(cols,lim-j0)
                    if vis<=0: continue
                    lanes=np.arange(W)
                    s=np.full(W,-np.inf,f32)
                    for ln in range(vis): s[ln]=f32(np.dot(Qs[r,:d],Ks[ln,:d]))*scale
                    mx=max(m[w,rr],s.max()); corr=f32(np.exp(f32(m[w,rr]-mx)))
                    p=np.where(lanes<vis,np.exp((s-mx).astype(f32)),0).astype(f32)
                    l[w,rr]=l[w,rr]*corr+p.sum(); m[w,rr]=mx
                    o[w,rr]*=corr
                    for j in range(vis): o[w,rr,:d]+=p[j]*Vs[j,:d]
        for w in range(WARPS):
            for rr in range(4):
                r=w*4+rr
                if r>=rows: continue
                i=i0+r; anyv=l[w,rr]>0
                for c in range(d): out[qbase+i*C+c]= o[w,rr,c]/l[w,rr] if anyv else 0
                lse[bh*Tq+i]= m[w,rr]+math.log(l[w,rr]) if anyv else -np.inf
    return out.reshape(B,Tq,C), lse.reshape(B,H,Tq)

def emu_backward(dout,out,lse,q,k,v,key_len,causal,B,Tq,Tk,C,H):
    d=C//H; scale=f32(1.0/math.sqrt(d))
    dq=np.zeros(B*Tq*C,f32); dk=np.zeros(B*Tk*C,f32); dv=np.zeros(B*Tk*C,f32)
    qf,kf,vf,gf,of,lf=[x.reshape(-1) for x in (q,k,v,dout,out,lse)]
    kblocks=(Tk+KEYS-1)//KEYS
    for blk in range(B*H*kblocks):
        bh=blk//kblocks; j0=(blk%kblocks)*KEYS; b=bh//H; h=bh%H
        qbase=b*Tq*C+h*d; kbase=b*Tk*C+h*d
        kl=Tk if key_len is None else key_len[b]; valid=0 if kl<0 else min(kl,Tk)
        cols=min(KEYS,Tk-j0)
        if j0>=valid: continue
        Ks=np.zeros((KEYS,MAXD+1),f32); Vs=np.zeros((KEYS,MAXD+1),f32)
        for e in range(KEYS*d):
            j,c=divmod(e,d)
            if j<cols: Ks[j,c]=kf[kbase+(j0+j)*C+c]; Vs[j,c]=vf[kbase+(j0+j)*C+c]
        acc_k=np.zeros(KEYS*MAXD,f32); acc_v=np.zeros(KEYS*MAXD,f32)   # indexed by e
        for ib in range(j0 if causal else 0, Tq, WARPS):
            Qs=np.zeros((WARPS,MAXD),f32); Gs=np.zeros((WARPS,MAXD),f32); Ps=np.zeros((WARPS,KEYS),f32); Ss=np.zeros((WARPS,KEYS),f32)
            for w in range(WARPS):
                i=ib+w
                if i<Tq:
                    row=qbase+i*C
                    Qs[w,:d]=qf[row:row+d]; Gs[w,:d]=gf[row:row+d]
                    D=f32(np.dot(Gs[w,:d],of[row:row+d]))
                    lim=min(valid,i+1) if causal else valid
                    vis=min(cols,lim-j0)
                    for ln in range(max(0,vis)):
                        s=f32(np.dot(Qs[w,:d],Ks[ln,:d])); dp=f32(np.dot(Gs[w,:d],Vs[ln,:d]))
                        p=f32(np.exp(s*scale-lf[bh*Tq+i])); Ps[w,ln]=p; Ss[w,ln]=p*(dp-D)
            for tid in range(128):
                for u in range(32):
                    e=tid+128*u
                    if e<KEYS*d:
                        j,c=divmod(e,d)
                        acc_v[e]+=sum(Ps[w,j]*Gs[w,c] for w in range(WARPS))
                        acc_k[e]+=sum(Ss[w,j]*Qs[w,c] for w in range(WARPS))
        for e in range(KEYS*d):
            j,c=divmod(e,d)
            if j<cols:
                at=kbase+(j0+j)*C+c; dv[at]+=acc_v[e]; dk[at]+=scale*acc_k[e]
    qblocks=(Tq+DQR-1)//DQR
    for blk in range(B*H*qblocks):
        bh=blk//qblocks; i0=(blk%qblocks)*DQR; b=bh//H; h=bh%H
        qbase=b*Tq*C+h*d; kbase=b*Tk*C+h*d
        kl=Tk if key_len is None else key_len[b]; valid=0 if kl<0 else min(kl,Tk)
        rows=min(DQR,Tq-i0)
        Qs=np.zeros((DQR,MAXD),f32); Gs=np.zeros((DQR,MAXD),f32)
        for e in range(DQR*d):
            r,c=divmod(e,d)
            if r<rows: Qs[r,c]=qf[qbase+(i0+r)*C+c]; Gs[r,c]=gf[qbase+(i0+r)*C+c]
        D=np.zeros(DQR,f32); L=np.zeros(DQR,f32); acc=np.zeros((DQR,MAXD),f32)
        for r in range(rows):
            row=qbase+(i0+r)*C; D[r]=np.dot(gf[row:row+d],of[row:row+d]); L[r]=lf[bh*Tq+i0+r]
        kend=min(valid,min(Tk,i0+rows)) if causal else valid
        for j0 in range(0,kend,KEYS):
            cols=min(KEYS,kend-j0)
            Ks=np.zeros((KEYS,MAXD+1),f32); Vs=np.zeros((KEYS,MAXD+1),f32)
            for e in range(KEYS*d):
                j,c=divmod(e,d)
                if j<cols: Ks[j,c]=kf[kbase+(j0+j)*C+c]; Vs[j,c]=vf[kbase+(j0+j)*C+c]
            for r in range(rows):
                lim=min(valid,i0+r+1) if causal else valid
                vis=min(cols,lim-j0)
                if vis<=0: continue
                ds=np.zeros(W,f32)
                for ln in range(vis):
                    s=f32(np.dot(Qs[r,:d],Ks[ln,:d])); dp=f32(np.dot(Gs[r,:d],Vs[ln,:d]))
                    p=f32(np.exp(s*scale-L[r])); ds[ln]=p*(dp-D[r])
                for j in range(vis): acc[r,:d]+=ds[j]*Ks[j,:d]
        for r in range(rows):
            row=qbase+(i0+r)*C; dq[row:row+d]+=scale*acc[r,:d]
    return dq.reshape(B,Tq,C),dk.reshape(B,Tk,C),dv.reshape(B,Tk,C)

def rel(a,b):
    a=np.asarray(a,np.float64); b=np.asarray(b,np.float64)
    fin=np.isfinite(b)
    assert np.array_equal(np.isfinite(a),fin) and np.all(a[~fin]==b[~fin]), "inf/nan mismatch"
    return np.abs(a[fin]-b[fin]).max()/max(np.abs(b[fin]).max(),1.0) if fin.any() else 0.0

seed = int(sys.argv[1]) if len(sys.argv) > 1 else int(np.random.SeedSequence().entropy % 2**32)  # fresh unless given
print("seed", seed)
rng=np.random.default_rng(seed)
worst=0
for (B,Tq,Tk,H,d) in [(1,1,1,1,1),(2,37,37,2,5),(1,37,5,3,33),(2,5,37,1,40),(1,40,40,2,32),(2,33,70,1,3),(1,70,33,1,2),(1,9,9,1,128),(1,20,33,2,65)]:
    C=H*d
    for causal in (False,True):
        for mk in range(3):
            q=rng.standard_normal((B,Tq,C)).astype(f32); k=rng.standard_normal((B,Tk,C)).astype(f32); v=rng.standard_normal((B,Tk,C)).astype(f32); g=rng.standard_normal((B,Tq,C)).astype(f32)
            kl=None
            if mk: kl=list(rng.integers(1,Tk+1,B)); 
            if mk==2: kl[0]=0
            o,l,dq,dk,dv=ref(q,k,v,kl,causal,B,Tq,Tk,C,H,g)
            eo,el=emu_forward(q,k,v,kl,causal,B,Tq,Tk,C,H)
            edq,edk,edv=emu_backward(g,o.astype(f32),l.astype(f32),q,k,v,kl,causal,B,Tq,Tk,C,H)
            errs=[rel(eo,o),rel(el,l),rel(edq,dq),rel(edk,dk),rel(edv,dv)]
            worst=max(worst,max(errs))
            if max(errs)>1e-5: print("FAIL",B,Tq,Tk,H,d,causal,mk,errs)
print("largest normwise error", worst)
sys.exit(0 if worst <= 1e-5 else 1)
