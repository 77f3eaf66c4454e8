#!/bin/bash
# What the workplace's GPU kit (run.sh) does not measure and issues 27 and 28 ask for, on the
# same machine after it: bash .gpu/run.sh, then bash .gpu/extra.sh, in one device call or
# in a second one while the machine is held (hack/gpu/prepare.sh puts this script in
# .gpu/). It reuses what run.sh left in /tmp (the unpacked binaries in
# /tmp/gpux, libvmaf's CPU build, the 1080p clip pair) and appends to $OUT/summary.log,
# about four minutes, each step bounded, most important first:
#   G. issue 27's steady state on the device: the vulkan backend's frames/s on long calls
#      at 1080p and 4K on 1, 4 and every thread (vkkernel's BenchmarkThroughput), with the
#      counts and a CPU profile of the host's side (vk_throughput.prof);
#   D. where the device's time a frame goes: upload, motion, VIF, ADM and all three, each
#      alone on top of the upload, workers driven directly (vkkernel's BenchmarkPasses), and
#      each phase of a frame from the device's timestamps (BenchmarkPhases);
#   1. issue 28's threads: the kernel's frames/s, B/op and peak heap at 1080p on 1 thread
#      and on every core, vmaf_v0.6.1 and vmaf_v1.0.16_3d0h (BenchmarkScoreScaling), and
#      the ratio from interleaved pairs of calls (its /scaling); and the passes over a
#      frame's luma beside each other against one after another, pairs (BenchmarkWalk);
#   2. issue 28 on one core and on all of them, whole process: vmafx cpu against libvmaf's
#      CPU build (AVX-512) at 1 thread and at 16, 1080p, interleaved rounds;
#   3. issue 27 for VMAF v1: the device's counts and frames/s (BenchmarkScoreV1), and the
#      whole process with vmaf_v1.0.16_3d0h on the GPU beside the CPU and libvmaf's CPU build,
#      with the pooled scores (libvmaf's CUDA build has no SpEED or CAMBI);
#   4. issue 27's GPU decode: the 1080p pair's distorted clip encoded as H.264 and HEVC
#      (carried by prepare.sh, with a small ffmpeg, where the machine has none), scored
#      through the GPU's decoder and through software;
# and, asked by name (STEPS=AOKSWUPCH):
#   A. a change against its baseline (hack/gpu/prepare.sh with VMAFX_GPU_BASELINE): the
#      vulkan backend's steady state (BenchmarkThroughput, 1080p and 4K, 1, 4 and every
#      thread) and the whole process at 1080p on 1, 4 and every thread, the two builds
#      interleaved, three rounds, with the pooled scores; and the vulkan package's tests
#      on this GPU;
# and where the time goes:
#   O. the frames the CPU scores while the device opens: the whole process at 1080p, 240
#      frames, vulkan on 1, 4 and every thread, by default and with --wait-for-device, with
#      an empty shader cache as a new Pod has and with a warm one, and every thread with
#      --device-threads 1 and 4 (the others on the CPU beside the device), interleaved, two
#      rounds, with the result's device.cpuFrames and the pooled score;
#   K. a Pod's CPUs: the whole process at 1080p, 240 frames, vulkan on its default threads
#      and libvmaf's CUDA build (when run.sh built it) on 2 CPUs, the operator's default
#      limit, and on all of them, interleaved, three rounds: on 2 CPUs the host's side of a
#      run (BenchmarkHostSide) bounds it;
#   S. a worker's fixed cost on the GPU: the whole process at 1080p on 1 and 4 threads,
#      each phase from its log lines (exec to device open and self-test, inputs, frames,
#      report, exit), with an empty shader cache as a new Pod has and with a warm one, the
#      steps of the device's open and close as the worker logs them, and the frames the CPU
#      scored before the device took over (cpuFrames; the self-test runs beside the device's);
#   W. where a worker's CPU time goes on the GPU: the whole process at 1080p, 240 frames,
#      vulkan on 1 and 4 threads, each with a CPU profile of the scoring process
#      (VMAFX_CPU_PROFILE, worker_t1.prof and worker_t4.prof, packed with the logs: read
#      them with go tool pprof where Go is);
#   U. how busy the GPU is while BenchmarkThroughput runs on every thread (nvidia-smi dmon);
#   P. issue 28's threads against their ceiling: the CPU's topology, and 1080p frames/s of
#      one 1-thread process, of one process on 8 and on every thread, and of one 1-thread
#      process per core at once (what the cores give with nothing shared in the process).
#   C. what that ceiling is made of: one 1-thread process alone and one a core at once, at
#      176x144 (a frame's work fits in a core's L2: only the clock is shared) and at 1080p
#      (the caches and memory are shared too), the avx512 path.
#   H. GPU decode in a Pod's CPUs: ffmpeg alone decoding the two encodes (240 frames, and
#      looped 4 times) on NVDEC and in software, on 2 cores and on all of them, and the
#      worker decoding and scoring on 2 cores (the operator's default CPU limit).
# Without run.sh before it on this machine, it unpacks the binaries and makes the 1080p
# clip pair itself (steps 2 and 3 then lack libvmaf's build). At the end it packs every
# file in $OUT but summary.log into one logs-<time>.tgz: the device tool brings back at
# most 8 files.
set -u
OUT=${OUT:-$PWD/gpu-out}; mkdir -p "$OUT"
R=$PWD; X=/tmp/gpux; T0=$(date +%s)
el(){ echo "== extra [$(( $(date +%s)-T0 ))s] $*"; }
exec > >(tee -a "$OUT/summary.log") 2>&1
N=$(nproc)
# unpack puts the named binaries of .gpu/ (xz, as prepare.sh packs them) into $X, those
# there and not yet unpacked.
unpack(){ local b; for b; do [ -f $R/.gpu/$b.xz ] && [ ! -x $X/$b ] || continue
  python3 -c "import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2],'wb'))" $R/.gpu/$b.xz $X/$b && chmod +x $X/$b; done; }
if ! [ -x $X/vmaf.test ] || ! [ -x $X/vmafx-worker ]; then
  el "no run.sh before: unpacking the binaries and making the 1080p pair"
  G=$R/.gpu; mkdir -p $X
  for f in $G/deb/*.deb; do dpkg -x $f /; done; ldconfig
  unpack vmafx-worker vkkernel.test vmaf.test vulkan.test base-vmafx-worker base-vkkernel.test
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; grep -m1 'model name' /proc/cpuinfo
  ls /usr/share/vulkan/icd.d/nvidia* /etc/vulkan/icd.d/nvidia* >/dev/null 2>&1 || export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  ( cd /tmp && timeout 120 python3 $G/gen.py 1920 1080 240 /tmp/c1080 )
fi
# ffmpeg_here puts prepare.sh's small ffmpeg on PATH where the machine has none, and the
# two encodes in /tmp.
ffmpeg_here(){
  if [ -f $R/.gpu/ffmpeg/ffmpeg.xz ] && ! command -v ffmpeg >/dev/null; then
    mkdir -p $X/ff && for b in ffmpeg ffprobe; do
      python3 -c "import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2],'wb'))" $R/.gpu/ffmpeg/$b.xz $X/ff/$b && chmod +x $X/ff/$b; done
    export PATH=$X/ff:$PATH
    ls /usr/lib/x86_64-linux-gnu/libnvcuvid.so* /usr/lib64/libnvcuvid.so* /usr/local/nvidia/lib64/libnvcuvid.so* 2>/dev/null | head -2 || true
  fi
  for c in libx264 libx265; do [ -f $R/.gpu/e4_$c.mp4 ] && [ ! -f /tmp/e4_$c.mp4 ] && cp $R/.gpu/e4_$c.mp4 /tmp/e4_$c.mp4; done
  true
}
# A subset, to rerun one step: STEPS=4 bash .gpu/extra.sh. A, O, K, S, W, U, P, C and H
# run only when named.
STEPS=${STEPS:-GD1234}
step(){ [[ $STEPS == *$1* ]]; }

if step G; then
el "G. the vulkan backend's steady state: long calls, 1, 4 and $N threads, 1080p and 4K (BenchmarkThroughput)"
( cd vmaf/vkkernel && timeout 110 $X/vkkernel.test -test.run '^$' -test.bench 'Throughput' -test.benchtime 1x -test.count 3 -test.cpuprofile "$OUT/vk_throughput.prof" > "$OUT/bench_throughput.log" 2>&1 )
grep -E '^Benchmark|device' "$OUT/bench_throughput.log" | sed -E 's/ +/ /g'
fi

if step D; then
el "D. the device's time a frame by what it asks (BenchmarkPasses: upload, motion, VIF, ADM, all; 1 and $N threads)"
( cd vmaf/vkkernel && timeout 100 $X/vkkernel.test -test.run '^$' -test.bench 'Passes' -test.benchtime 3x > "$OUT/bench_passes.log" 2>&1 )
grep -E '^Benchmark' "$OUT/bench_passes.log" | sed -E 's/ +/ /g'
# Stage by stage from the device's timestamps: each phase's time and what ran in it.
( cd vmaf/vkkernel && timeout 60 $X/vkkernel.test -test.run '^$' -test.bench 'Phases' -test.benchtime 3x -test.v > "$OUT/bench_phases.log" 2>&1 )
grep -E '^Benchmark|µs a frame|stamps left' "$OUT/bench_phases.log" | sed -E 's/^ +bench_test.go:[0-9]+: //; s/ +/ /g'
fi

if step 1; then
el "E1. the kernel's threads at 1080p: 1 and $N threads, 16 frames a thread in memory (BenchmarkScoreScaling)"
( cd vmaf && timeout 100 $X/vmaf.test -test.run '^$' -test.bench 'ScoreScaling/.*/1920x1080/threads' -test.benchtime 1x -test.count 3 -test.benchmem > "$OUT/bench_scaling.log" 2>&1 )
grep -E '^Benchmark' "$OUT/bench_scaling.log" | sed -E 's/ +/ /g'
python3 - "$OUT/bench_scaling.log" "$N" <<'PY'
import re,sys,statistics,collections
fps=collections.defaultdict(list); mem=collections.defaultdict(list)
for l in open(sys.argv[1]):
    m=re.match(r'BenchmarkScoreScaling/(\S+)/1920x1080/threads=(\d+)-\d+\s',l)
    if not m: continue
    f=re.search(r'([0-9.]+) frames/s',l); b=re.search(r'(\d+) B/op',l)
    fps[(m[1],int(m[2]))].append(float(f[1])); mem[(m[1],int(m[2]))].append(int(b[1]))
n=int(sys.argv[2])
for model in sorted({k[0] for k in fps}):
    one,many=fps.get((model,1)),fps.get((model,n))
    if one and many:
        s=statistics.median(many)/(n*statistics.median(one))
        print(f"{model}: {statistics.median(one):.2f} fps on 1 thread, {statistics.median(many):.1f} on {n}: {s:.3f} of {n} times one (target at least 0.9); B/op {min(mem[(model,1)])/1e6:.0f} MB on 1, {min(mem[(model,n)])/1e6:.0f} MB on {n}")
PY
# The target's ratio from pairs of calls a second apart (1 thread, then $N, alternating),
# the median of 7 pairs' ratios: the 1-thread figure alone drifts with the clock.
( cd vmaf && timeout 60 $X/vmaf.test -test.run '^$' -test.bench 'ScoreScaling/.*/1920x1080/scaling' -test.benchtime 7x > "$OUT/bench_scaling_pairs.log" 2>&1 )
grep -E '^Benchmark' "$OUT/bench_scaling_pairs.log" | sed -E 's/ +/ /g'
# The passes over a frame's luma reading each row beside each other (rowWalk) against one
# after another, vmaf_v0.6.1 and v1, 1080p, pairs of calls; beside/apart above 1 where the
# walk is faster.
( cd vmaf && timeout 60 $X/vmaf.test -test.run '^$' -test.bench 'Walk/.*/1920x1080' -test.benchtime 5x > "$OUT/bench_walk.log" 2>&1 )
grep -E '^Benchmark' "$OUT/bench_walk.log" | sed -E 's/ +/ /g'
# The one serial step of a run, reading both inputs: the most frames/s any thread count
# can score (docs/benchmarks.md, "Threads and the serial step").
( cd vmaf && timeout 60 $X/vmaf.test -test.run '^$' -test.bench 'ReadPair' -test.count 3 > "$OUT/bench_readpair.log" 2>&1 )
grep -E '^Benchmark' "$OUT/bench_readpair.log" | sed -E 's/ +/ /g'
fi

if step 2; then
el "E2. whole process, 1920x1080 240 frames, vmaf_v0.6.1: vmafx cpu against libvmaf CPU (AVX-512), 1 and 16 threads"
python3 - <<'PY'
import os,subprocess,time,statistics
X='/tmp/gpux'; b='/tmp/c1080'; n=240
if not os.path.exists(b+'_ref.yuv'): raise SystemExit('no 1080p clip (run.sh makes it)')
lib=lambda t:['taskset','-c','0-15',X+'/vmaf-cpu','-r',b+'_ref.yuv','-d',b+'_dist.yuv','-w','1920','-h','1080','-p','420','-b','8','-m','version=vmaf_v0.6.1','--threads',str(t),'-q','--json','-o','/tmp/e2l.json']
vx=lambda t:['taskset','-c','0-15',X+'/vmafx-worker','score','--reference','file://'+b+'_ref.yuv','--distorted','file://'+b+'_dist.yuv','--width','1920','--height','1080','--backend','cpu','--threads',str(t),'--output','file:///tmp/e2v.json','--termination-log','/tmp/term']
cfg={}
for t in (1,16):
    cfg[f'vmafx cpu t{t}']=vx(t)
    if os.path.exists(X+'/vmaf-cpu'): cfg[f'libvmaf CPU t{t}']=lib(t)
res={k:[] for k in cfg}
for r in range(2):
    for k,c in cfg.items():
        t=time.perf_counter(); subprocess.run(c,stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL,timeout=60); res[k].append(n/(time.perf_counter()-t))
m={k:statistics.median(v) for k,v in res.items()}
for k in m: print(f"{k:18s} {m[k]:7.1f} fps  runs {[round(x,1) for x in res[k]]}")
for t in (1,16):
    if f'libvmaf CPU t{t}' in m: print(f"vmafx / libvmaf CPU at {t} threads: {m[f'vmafx cpu t{t}']/m[f'libvmaf CPU t{t}']:.3f}")
if 'vmafx cpu t1' in m: print(f"vmafx threads: {m['vmafx cpu t16']/(16*m['vmafx cpu t1']):.3f} of 16 times one thread")
PY
fi

if step 3; then
el "E3. VMAF v1 on the GPU: the device's structure and frames/s (BenchmarkScoreV1, 4 frames a call)"
( cd vmaf/vkkernel && timeout 60 $X/vkkernel.test -test.run '^$' -test.bench 'ScoreV1' -test.count 2 > "$OUT/bench_v1.log" 2>&1 ); grep -E '^Benchmark|device' "$OUT/bench_v1.log"
python3 - <<'PY'
import os,subprocess,time,statistics,json
X='/tmp/gpux'; b='/tmp/c1080'; n=240; M='vmaf_v1.0.16_3d0h'
vx=lambda be,t:[X+'/vmafx-worker','score','--reference','file://'+b+'_ref.yuv','--distorted','file://'+b+'_dist.yuv','--width','1920','--height','1080','--model',M,'--backend',be,'--threads',str(t),'--output','file:///tmp/e3v.json','--termination-log','/tmp/term']
cfg={'vmafx vulkan t1':vx('vulkan',1),'vmafx vulkan t4':vx('vulkan',4),'vmafx cpu t16':vx('cpu',16)}
if os.path.exists(X+'/vmaf-cpu'):
    cfg['libvmaf CPU t16']=[X+'/vmaf-cpu','-r',b+'_ref.yuv','-d',b+'_dist.yuv','-w','1920','-h','1080','-p','420','-b','8','-m','version='+M,'--threads','16','-q','--json','-o','/tmp/e3l.json']
res={k:[] for k in cfg}; pooled={}
for r in range(2):
    for k,c in cfg.items():
        t=time.perf_counter(); p=subprocess.run(c,stdout=subprocess.PIPE,stderr=subprocess.STDOUT,timeout=90); e=time.perf_counter()-t
        o=c[c.index('-o')+1] if '-o' in c else '/tmp/e3v.json'
        try: pooled[k]=json.load(open(o))['pooled_metrics']['vmaf']['mean']
        except Exception: pooled[k]='no output: '+p.stdout.decode(errors='replace')[-200:]
        res[k].append(n/e)
print(f"--- 1920x1080, {n} frames, {M}: whole-process wall fps, median of 2 interleaved rounds (pooled VMAF)")
for k,v in res.items(): print(f"{k:18s} {statistics.median(v):8.1f} fps  runs {[round(x,1) for x in v]}  pooled {pooled.get(k)}")
PY
fi

if step 4; then
el "E4. GPU decode: H.264 and HEVC encodes of the 1080p pair's distorted clip, GPU decoder against software"
# The machine has no ffmpeg: prepare.sh carries a small one (hack/gpu/build-ffmpeg.sh) and
# the two encodes, made where libx264 and libx265 are.
ffmpeg_here
if ! command -v ffmpeg >/dev/null; then echo "no ffmpeg on this machine: GPU decode not measured"; else
  ffmpeg -hide_banner -hwaccels 2>&1 | tr '\n' ' '; echo
  for c in libx264 libx265; do
    [ -f /tmp/e4_$c.mp4 ] && continue
    timeout 60 taskset -c $((N/2))-$((N-1)) ffmpeg -v error -y -f rawvideo -pix_fmt yuv420p -s 1920x1080 -r 24 -i /tmp/c1080_dist.yuv -c:v $c -preset veryfast -crf 23 /tmp/e4_$c.mp4 || echo "encode with $c failed"
  done
  python3 - <<'PY'
import os,subprocess,time,statistics,json
X='/tmp/gpux'; n=240
for c in ('libx264','libx265'):
    f=f'/tmp/e4_{c}.mp4'
    if not os.path.exists(f): continue
    # The worker decodes on the GPU on a GPU slot, which the device plugin names in
    # VMAFX_DEVICE; without it, in software.
    for label,env in (('NVDEC (nvidia-0 slot)',{'VMAFX_DEVICE':'nvidia-0'}),('software decode',{})):
        cmd=[X+'/vmafx-worker','score','--reference','file:///tmp/c1080_ref.yuv','--distorted','file://'+f,'--width','1920','--height','1080','--backend','vulkan','--threads','4','--termination-log','/tmp/e4term']
        runs=[]; dec=''
        for r in range(2):
            t=time.perf_counter(); p=subprocess.run(cmd,stdout=subprocess.PIPE,stderr=subprocess.STDOUT,timeout=90,env={**{k:v for k,v in os.environ.items() if k!='VMAFX_DEVICE'},**env}); runs.append(n/(time.perf_counter()-t))
            try: dec=json.dumps(json.loads(open('/tmp/e4term').read()).get('decode'))
            except Exception: dec='no result: '+p.stdout.decode(errors='replace')[-200:]
        print(f"{c:8s} {label:22s} {statistics.median(runs):7.1f} fps (decode and score) runs {[round(x,1) for x in runs]}  decode {dec}")
PY
fi
fi
if step A; then
G=$R/.gpu
unpack vulkan.test base-vmafx-worker base-vkkernel.test
if [ -x $X/vulkan.test ]; then
  el "A0. the vulkan package's tests on this GPU (its queues among them)"
  ( cd vmaf/vulkan && VMAFX_REQUIRE_VULKAN=1 timeout 60 $X/vulkan.test -test.count=1 -test.v 2>&1 | grep -E '^(--- |FAIL|PASS|ok)|queues|imported at' )
  # What importing a 1080p Score's frame planes costs a worker (the driver pins them).
  ( cd vmaf/vulkan && timeout 30 $X/vulkan.test -test.run '^$' -test.bench 'ImportHost' -test.count 3 2>&1 | grep -E '^Benchmark' )
fi
if [ -x $X/base-vkkernel.test ]; then
el "A. this build against the baseline $(cat $G/base-commit 2>/dev/null): the vulkan backend's steady state and the whole process, interleaved"
python3 - "$N" <<'PY'
import os,subprocess,time,statistics,re,json,sys
X='/tmp/gpux'; N=int(sys.argv[1]); b='/tmp/c1080'
builds={'base':(X+'/base-vkkernel.test',X+'/base-vmafx-worker'),'new':(X+'/vkkernel.test',X+'/vmafx-worker')}
fps={}; pooled={}
for r in range(3):
    for name,(kt,wk) in builds.items():
        p=subprocess.run([kt,'-test.run','^$','-test.bench',f'Throughput/.*/threads=(1|4|{N})$','-test.benchtime','1x'],cwd='vmaf/vkkernel',stdout=subprocess.PIPE,stderr=subprocess.STDOUT,timeout=90)
        for m in re.finditer(r'^BenchmarkThroughput/(\S+?)-\d+\s.*?([0-9.]+) frames/s',p.stdout.decode(),re.M):
            fps.setdefault(('kernel '+m[1],name),[]).append(float(m[2]))
        for t in (1,4,N):
            cmd=[wk,'score','--reference','file://'+b+'_ref.yuv','--distorted','file://'+b+'_dist.yuv','--width','1920','--height','1080','--backend','vulkan','--threads',str(t),'--output','file:///tmp/a.json','--termination-log','/tmp/aterm']
            t0=time.perf_counter(); subprocess.run(cmd,stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL,timeout=60); e=time.perf_counter()-t0
            fps.setdefault((f'whole process 1080p 240 frames threads={t}',name),[]).append(240/e)
            try: pooled[(t,name)]=json.load(open('/tmp/a.json'))['pooled_metrics']['vmaf']['mean']
            except Exception as ex: pooled[(t,name)]=str(ex)
        # The device's open with an empty shader cache (a new Pod), from the worker's log.
        import tempfile
        p=subprocess.run(cmd[:-6]+['--threads','1','--termination-log','/tmp/aterm'],stdout=subprocess.PIPE,stderr=subprocess.STDOUT,timeout=60,
                         env={**os.environ,'__GL_SHADER_DISK_CACHE_PATH':tempfile.mkdtemp(prefix='acold')})
        m=re.search(r'openSeconds=([0-9.]+)',p.stdout.decode(errors='replace'))
        if m: fps.setdefault(('open seconds, empty shader cache',name),[]).append(float(m[1]))
for key in sorted({k for k,_ in fps}, key=lambda s:(s.startswith('whole'),s)):
    bv,nv=fps.get((key,'base'),[]),fps.get((key,'new'),[])
    if bv and nv:
        unit='s' if key.startswith('open') else 'frames/s'
        print(f"{key:48s} base {statistics.median(bv):8.3f}  new {statistics.median(nv):8.3f} {unit}  new/base {statistics.median(nv)/statistics.median(bv):.3f}  runs base {[round(x,3) for x in bv]} new {[round(x,3) for x in nv]}")
print('pooled VMAF:', {f'{n} t{t}':v for (t,n),v in pooled.items()})
PY
fi
fi

if step O; then
el "O. frames on the CPU while the device opens: 1080p 240 frames, vulkan, default against --wait-for-device, empty and warm shader cache"
python3 - <<'PY'
import os,subprocess,time,tempfile,json,statistics
X='/tmp/gpux'; b='/tmp/c1080'; N=os.cpu_count()
def run(t,wait,cold,dev=0):
    cache=tempfile.mkdtemp(prefix='cold') if cold else '/tmp/glwarm'
    env={**os.environ,'__GL_SHADER_DISK_CACHE_PATH':cache,'VMAFX_WAIT_FOR_DEVICE':'true' if wait else 'false','VMAFX_DEVICE_THREADS':str(dev)}
    cmd=[X+'/vmafx-worker','score','--reference','file://'+b+'_ref.yuv','--distorted','file://'+b+'_dist.yuv','--width','1920','--height','1080','--backend','vulkan','--threads',str(t),'--output','file:///tmp/o.json','--termination-log','/tmp/oterm']
    t0=time.time(); subprocess.run(cmd,stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL,env=env,timeout=60); e=time.time()-t0
    try: r=json.load(open('/tmp/oterm')); cpu=(r.get('device') or {}).get('cpuFrames',0); sc=r.get('score')
    except Exception as ex: cpu,sc='?',str(ex)[:80]
    return e,cpu,sc
os.makedirs('/tmp/glwarm',exist_ok=True); run(1,True,False)  # fills the warm cache
res={}
for r in range(2):
    for cold in (True,False):
        for t in (1,4,N):
            for wait in (True,False):
                res.setdefault((cold,t,wait,0),[]).append(run(t,wait,cold))
    for dev in (1,4):  # the other threads on the CPU beside the device (--device-threads)
        res.setdefault((False,N,False,dev),[]).append(run(N,False,False,dev))
for (cold,t,wait,dev),v in res.items():
    walls=[x[0] for x in v]
    mode='--wait-for-device' if wait else (f'--device-threads {dev}' if dev else 'default')
    print(f"cache {'empty' if cold else 'warm '} threads {t:2d} {mode:19s}: {240/statistics.median(walls):6.1f} fps (walls {[round(w,3) for w in walls]}), cpuFrames {[x[1] for x in v]}, score {v[-1][2]}")
PY
fi

if step K; then
el "K. a Pod's CPUs: 1080p 240 frames, vulkan (default threads) and libvmaf CUDA on 2 CPUs (the operator's default limit) and on all, warm shader cache"
python3 - <<'PY'
import os,subprocess,time,json,statistics
X='/tmp/gpux'; b='/tmp/c1080'; N=os.cpu_count()
def vx(th=0): return [X+'/vmafx-worker','score','--reference','file://'+b+'_ref.yuv','--distorted','file://'+b+'_dist.yuv','--width','1920','--height','1080','--backend','vulkan','--output','file:///tmp/k.json','--termination-log','/tmp/kterm']
def cu(th): return [X+'/vmaf-cuda','-r',b+'_ref.yuv','-d',b+'_dist.yuv','-w','1920','-h','1080','-p','420','-b','8','-m','version=vmaf_v0.6.1','--threads',str(th),'-q','--json','-o','/tmp/kcu.json']  # as run.sh runs it
cfg={'vmafx vulkan':vx}
if os.path.exists(X+'/vmaf-cuda'): cfg['libvmaf CUDA']=cu
env={**os.environ,'__GL_SHADER_DISK_CACHE_PATH':'/tmp/glwarm'}; os.makedirs('/tmp/glwarm',exist_ok=True)
subprocess.run(vx(),stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL,env=env,timeout=60)  # fills the warm cache
res={}
for r in range(3):
    for cpus in ('0-1',f'0-{N-1}'):
        for name,cmd in cfg.items():
            th=2 if cpus=='0-1' else N
            t0=time.time(); p=subprocess.run(['taskset','-c',cpus]+cmd(th),stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL,env=env,timeout=120); e=time.time()-t0
            res.setdefault((cpus,name),[]).append((e,p.returncode))
for (cpus,name),v in res.items():
    walls=[x[0] for x in v]
    print(f"CPUs {cpus:5s} {name:13s}: {240/statistics.median(walls):6.1f} fps (walls {[round(w,3) for w in walls]}, rc {[x[1] for x in v]})")
try: print('vmafx score', json.load(open('/tmp/kterm')).get('score'))
except Exception as ex: print('no result:', ex)
PY
fi

if step S; then
el "S. a worker's fixed cost on the GPU: 1080p 240 frames, phases from its log lines; empty shader cache (a new Pod) and warm"
python3 - <<'PY'
import os,subprocess,time,re,tempfile,datetime,json
X='/tmp/gpux'; b='/tmp/c1080'
def run(t,cache):
    env={**os.environ,'__GL_SHADER_DISK_CACHE_PATH':cache}
    cmd=[X+'/vmafx-worker','score','--reference','file://'+b+'_ref.yuv','--distorted','file://'+b+'_dist.yuv','--width','1920','--height','1080','--backend','vulkan','--threads',str(t),'--output','file:///tmp/s.json','--termination-log','/tmp/sterm']
    t0=time.time(); p=subprocess.run(cmd,stdout=subprocess.PIPE,stderr=subprocess.STDOUT,env=env,timeout=60); t1=time.time()
    marks={}; extra=''
    for l in p.stdout.decode(errors='replace').splitlines():
        m=re.match(r'[IWE]\d{4} (\d\d):(\d\d):(\d\d\.\d+)',l)
        if not m: continue
        d=datetime.datetime.fromtimestamp(t0)
        ts=d.replace(hour=int(m[1]),minute=int(m[2]),second=0,microsecond=0).timestamp()+float(m[3])
        for key,name in (('"Opened the device"','opened'),('"Scoring"','scoring'),('"Wrote per-frame scores"','frames'),('"Closed the device"','closed'),('"Scored"','scored')):
            if key in l and name not in marks: marks[name]=ts-t0
        if '"Opened the device"' in l or '"Closed the device"' in l:  # the open's and the close's steps
            extra=(extra+' ' if extra else '')+' '.join(f"{k}={float(v):.3f}" for k,v in re.findall(r'(\w+)Seconds=([0-9.e-]+)',l))
    seq=sorted(marks,key=marks.get); prev=0; parts=[]  # the device opens beside the inputs and first frames
    for k in seq:
        if k in marks: parts.append(f"{k} +{marks[k]-prev:.3f}"); prev=marks[k]
    parts.append(f"exit +{t1-t0-prev:.3f}")
    try: cpu=json.load(open('/tmp/sterm'))['device'].get('cpuFrames',0)  # frames the CPU scored before the device took over
    except Exception as ex: cpu=f'? ({ex})'
    print(f"threads {t} cache {'empty' if 'cold' in cache else 'warm'}: wall {t1-t0:.3f} s ({240/(t1-t0):.0f} fps); "+', '.join(parts)+f"; cpuFrames={cpu}; {extra}")
os.makedirs('/tmp/glwarm',exist_ok=True)
run(1,'/tmp/glwarm')  # fills the warm cache
for r in range(2):
    for t in (1,4):
        run(t,tempfile.mkdtemp(prefix='cold'))
        run(t,'/tmp/glwarm')
PY
fi

if step W; then
el "W. where a worker's CPU time goes: 1080p 240 frames, vulkan, warm shader cache, CPU profiles in worker_t*.prof"
mkdir -p /tmp/glwarm
for t in 1 4; do
  for r in 1 2; do  # the first fills the cache; the second is profiled
    rm -f "$OUT/worker_t$t.prof"
    s0=$(date +%s.%N)
    __GL_SHADER_DISK_CACHE_PATH=/tmp/glwarm VMAFX_CPU_PROFILE="$OUT/worker_t$t.prof" timeout 60 $X/vmafx-worker score \
      --reference file:///tmp/c1080_ref.yuv --distorted file:///tmp/c1080_dist.yuv --width 1920 --height 1080 \
      --backend vulkan --threads $t --output file:///tmp/w.json --termination-log /tmp/wterm > /tmp/w.log 2>&1
    rc=$?
    echo "threads $t round $r: rc $rc, wall $(awk "BEGIN{printf \"%.3f\", $(date +%s.%N) - $s0}") s"
  done
  ls -la "$OUT/worker_t$t.prof" 2>&1 | awk '{print "  profile", $5, "bytes"}'
done
fi

if step U; then
el "U. how busy the GPU is during BenchmarkThroughput on $N threads (nvidia-smi dmon, 1 s samples: sm% mem%)"
for c in "1920x1080/threads=$N\$" "1920x1080/threads=$N/source=shared" "3840x2160/threads=$N\$" "3840x2160/threads=$N/source=shared"; do
  nvidia-smi dmon -s u -d 1 > /tmp/dmon.log 2>&1 & DM=$!
  ( cd vmaf/vkkernel && timeout 40 $X/vkkernel.test -test.run '^$' -test.bench "Throughput/$c" -test.benchtime 6x > /tmp/u.log 2>&1 )
  kill $DM 2>/dev/null; wait $DM 2>/dev/null
  grep -E '^Benchmark' /tmp/u.log | sed -E 's/ +/ /g'
  echo "  sm% samples: $(awk '$1 ~ /^[0-9]+$/ {printf "%s ", $2}' /tmp/dmon.log)  mem%: $(awk '$1 ~ /^[0-9]+$/ {printf "%s ", $3}' /tmp/dmon.log)"
done
fi

if step P; then
el "P. the CPU's threads against their ceiling, 1080p vmaf_v0.6.1, 16 frames a thread"
lscpu | grep -E 'Model name|^CPU\(s\)|Thread|Core|Socket|NUMA node\(s\)|MHz|L2|L3' | sed -E 's/ +/ /g'
B='ScoreScaling/vmaf_v0.6.1/1920x1080/threads'
( cd vmaf && timeout 30 taskset -c 0 $X/vmaf.test -test.run '^$' -test.bench "$B=1\$" -test.cpu 1 -test.benchtime 1x -test.count 3 2>&1 | grep -E '^Benchmark' | sed -E 's/ +/ /g' )
( cd vmaf && timeout 30 taskset -c 0-7 $X/vmaf.test -test.run '^$' -test.bench "$B=8\$" -test.cpu 8 -test.benchtime 1x -test.count 3 2>&1 | grep -E '^Benchmark' | sed -E 's/ +/ /g' )
( cd vmaf && for i in $(seq 0 $((N-1))); do timeout 60 taskset -c $i $X/vmaf.test -test.run '^$' -test.bench "$B=1\$" -test.cpu 1 -test.benchtime 1x -test.count 3 > /tmp/p$i.log 2>&1 & done; wait )
python3 - "$N" <<'PY'
import re,sys,statistics
n=int(sys.argv[1]); per=[]
for i in range(n):
    v=[float(m[1]) for m in re.finditer(r'([0-9.]+) frames/s',open(f'/tmp/p{i}.log').read())]
    if v: per.append(statistics.median(v))
print(f"{len(per)} one-thread processes at once, one a core: each {min(per):.2f} to {max(per):.2f} fps (median {statistics.median(per):.2f}), together {sum(per):.1f} fps")
PY
fi

if step C; then
el "C. the ceiling's make-up: avx512, 1 thread, one process alone and one a core at once, 176x144 (fits in L2) and 1080p"
for sz in 176x144 1920x1080; do
  B="Score/$sz/cpu=avx512/threads=1\$"; bt=$([ $sz = 176x144 ] && echo 150x || echo 12x)
  for r in 1 2; do
    ( cd vmaf && timeout 30 taskset -c 0 $X/vmaf.test -test.run '^$' -test.bench "$B" -test.cpu 1 -test.benchtime $bt > /tmp/c_alone.log 2>&1 )
    ( cd vmaf && for i in $(seq 0 $((N-1))); do timeout 60 taskset -c $i $X/vmaf.test -test.run '^$' -test.bench "$B" -test.cpu 1 -test.benchtime $bt > /tmp/c$i.log 2>&1 & done; wait )
    python3 - "$N" "$sz" <<'PY'
import re,sys,statistics
n=int(sys.argv[1]); get=lambda f:[float(m[1]) for m in re.finditer(r'([0-9.]+) frames/s',open(f).read())]
alone=get('/tmp/c_alone.log'); per=[v for i in range(n) for v in get(f'/tmp/c{i}.log')]
if alone and per: print(f"{sys.argv[2]}: alone {alone[0]:.1f} frames/s; {len(per)} at once, one a core: each {min(per):.1f} to {max(per):.1f} (median {statistics.median(per):.1f}), together {sum(per):.0f}: {sum(per)/(n*alone[0]):.3f} of {n} times alone")
else: print(sys.argv[2], 'no figures', open('/tmp/c_alone.log').read()[-300:])
PY
  done
done
fi

if step H; then
el "H. GPU decode in a Pod's CPUs: ffmpeg alone (NVDEC and software, 2 cores and all), then the worker on 2 cores"
ffmpeg_here
if ! command -v ffmpeg >/dev/null; then echo "no ffmpeg: not measured"; else
python3 - "$N" <<'PY'
import os,subprocess,time,statistics,json,sys
N=int(sys.argv[1]); X='/tmp/gpux'
def dec(f,hw,cores,loops):
    cmd=['taskset','-c',cores,'ffmpeg','-v','error','-nostdin']+(['-hwaccel','cuda'] if hw else [])+(['-stream_loop',str(loops-1)] if loops>1 else [])+['-i',f,'-f','rawvideo','-pix_fmt','yuv420p','-y','/dev/null']
    t=time.perf_counter(); p=subprocess.run(cmd,stdout=subprocess.PIPE,stderr=subprocess.STDOUT,timeout=120); e=time.perf_counter()-t
    return 240*loops/e, (p.stdout.decode(errors='replace')[-160:] if p.returncode else '')
for c in ('libx264','libx265'):
    f=f'/tmp/e4_{c}.mp4'
    if not os.path.exists(f): continue
    for loops in (1,4):
        for cores in ('0-1',f'0-{N-1}'):
            res={}; err=''
            for r in range(2):
                for hw in (True,False):
                    fps,e=dec(f,hw,cores,loops); res.setdefault(hw,[]).append(fps); err=err or e
            print(f"ffmpeg alone {c} {240*loops:4d} frames on {2 if cores=='0-1' else N:2d} cores: NVDEC {statistics.median(res[True]):6.1f} fps {[round(x) for x in res[True]]}, software {statistics.median(res[False]):6.1f} {[round(x) for x in res[False]]}"+(f"  ({err.strip()})" if err.strip() else ''))
    for label,env in (('NVDEC',{'VMAFX_DEVICE':'nvidia-0'}),('software',{})):
        runs=[]; d=''
        for r in range(2):
            cmd=['taskset','-c','0-1',X+'/vmafx-worker','score','--reference','file:///tmp/c1080_ref.yuv','--distorted','file://'+f,'--width','1920','--height','1080','--backend','vulkan','--threads','2','--termination-log','/tmp/hterm']
            t=time.perf_counter(); p=subprocess.run(cmd,stdout=subprocess.PIPE,stderr=subprocess.STDOUT,timeout=120,env={**{k:v for k,v in os.environ.items() if k!='VMAFX_DEVICE'},**env}); runs.append(240/(time.perf_counter()-t))
            try: r=json.loads(open('/tmp/hterm').read()); d=f"decode {json.dumps(r.get('decode'))} score {r.get('score')}"
            except Exception: d='no result: '+p.stdout.decode(errors='replace')[-200:]
        print(f"worker on 2 cores, vulkan, 2 threads, {c} {label:8s}: {statistics.median(runs):6.1f} fps (decode and score) {[round(x,1) for x in runs]}  {d}")
# The same worker on raw input, for what the decode costs beside it.
runs=[]
for r in range(2):
    cmd=['taskset','-c','0-1',X+'/vmafx-worker','score','--reference','file:///tmp/c1080_ref.yuv','--distorted','file:///tmp/c1080_dist.yuv','--width','1920','--height','1080','--backend','vulkan','--threads','2','--termination-log','/tmp/hterm']
    t=time.perf_counter(); subprocess.run(cmd,stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL,timeout=120); runs.append(240/(time.perf_counter()-t))
print(f"worker on 2 cores, vulkan, 2 threads, raw distorted: {statistics.median(runs):6.1f} fps {[round(x,1) for x in runs]}")
PY
fi
fi

el done
( cd "$OUT" && f=$(ls | grep -v -e '^summary.log$' -e '^logs-.*\.tgz$'); [ -z "$f" ] || { tar czf "logs-$(date +%H%M%S).tgz" $f && rm -f $f; } )
