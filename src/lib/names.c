/*
 * names.c: the names of the enumerations, as the JSON contract and the
 * reports print them.
 */
#include <stddef.h>
#include <string.h>

#include "core.h"
#include "knowledge.h"

/* The kinds: JSON name, title for people, the framework that prints it. */
static const struct {
	const char *name, *title, *framework;
} od_kinds[OD_KIND_COUNT] = {
	[OD_KIND_CUDA_CACHING_ALLOCATOR] = { "cuda_caching_allocator",
	    "PyTorch CUDA caching allocator out of memory", "pytorch" },
	[OD_KIND_HIP] = { "hip", "PyTorch HIP (ROCm) out of memory", "pytorch" },
	[OD_KIND_XPU] = { "xpu", "PyTorch XPU allocator out of memory",
	    "pytorch" },
	[OD_KIND_CUDA_RAW] = { "cuda_raw", "CUDA runtime or driver out of memory",
	    "cuda" },
	[OD_KIND_CUBLAS] = { "cublas", "cuBLAS could not allocate", "cuda" },
	[OD_KIND_CUDNN] = { "cudnn", "cuDNN could not allocate", "cuda" },
	[OD_KIND_NCCL] = { "nccl", "NCCL out of device memory", "nccl" },
	[OD_KIND_MPS] = { "mps", "PyTorch MPS (Apple) out of memory", "pytorch" },
	[OD_KIND_TF] = { "tf_resource_exhausted",
	    "TensorFlow out of memory (ResourceExhausted)", "tensorflow" },
	[OD_KIND_XLA] = { "xla_resource_exhausted",
	    "XLA/JAX out of memory (RESOURCE_EXHAUSTED)", "jax" },
	[OD_KIND_HOST_OOM_KILLER] = { "host_oom_killer",
	    "Host memory: process killed", "linux" },
	[OD_KIND_DATALOADER_KILLED] = { "dataloader_killed",
	    "PyTorch DataLoader worker killed", "pytorch" },
	[OD_KIND_SLURM_OOM] = { "slurm_oom", "Slurm out-of-memory kill",
	    "slurm" },
	[OD_KIND_K8S_OOMKILLED] = { "k8s_oomkilled",
	    "Kubernetes container OOMKilled", "kubernetes" },
	[OD_KIND_HOST_ALLOC] = { "host_alloc_failed",
	    "Host memory allocation failed", "python" },
	[OD_KIND_CUPY] = { "cupy", "CuPy out of memory", "cupy" },
	[OD_KIND_ONNXRUNTIME] = { "onnxruntime",
	    "ONNX Runtime could not allocate", "onnxruntime" },
	[OD_KIND_TENSORRT] = { "tensorrt", "TensorRT could not allocate",
	    "tensorrt" },
	[OD_KIND_RAY] = { "ray", "Ray killed a task: node low on memory",
	    "ray" },
	[OD_KIND_VLLM_KV_CACHE] = { "vllm_kv_cache",
	    "vLLM: no memory left for the KV cache", "vllm" },
	[OD_KIND_GGML] = { "ggml", "llama.cpp/ggml could not allocate a buffer",
	    "ggml" },
	[OD_KIND_SGLANG_MEMORY_POOL] = { "sglang_memory_pool",
	    "SGLang: no room in its KV-cache or request pool", "sglang" },
	/* torch_npu, the PyTorch plugin for Huawei Ascend NPUs. */
	[OD_KIND_NPU] = { "npu",
	    "torch_npu (Ascend NPU) caching allocator out of memory",
	    "pytorch" },
	/* Apple's Metal under MLX (mlx/backend/metal of ml-explore/mlx). */
	[OD_KIND_METAL] = { "metal", "MLX: Apple Metal GPU out of memory",
	    "mlx" },
	/* The SYCL runtime (intel/llvm) and Level Zero under it. */
	[OD_KIND_SYCL] = { "sycl", "SYCL / Level Zero: device out of memory",
	    "sycl" },
	/* No framework: nothing but the phrase says who printed it. */
	[OD_KIND_UNRECOGNISED] = { "unrecognised",
	    "An out-of-memory phrase in no format oomdoc knows", NULL },
};

const char *
od_kind_name(od_kind kind)
{
	return (unsigned)kind < OD_KIND_COUNT ? od_kinds[kind].name : "unknown";
}

const char *
od_kind_title(od_kind kind)
{
	return (unsigned)kind < OD_KIND_COUNT ? od_kinds[kind].title :
	    "out of memory";
}

/*
 * cuDNN's INTERNAL_ERROR and EXECUTION_FAILED, its "Unable to find a valid
 * cuDNN algorithm" and cuBLAS's NOT_INITIALIZED are statuses that a failed
 * allocation of the library's handle or workspace usually causes, but
 * nothing in them says so (recognisers.yaml gives them medium or low
 * confidence): their title says that, not "could not allocate", which only
 * the ALLOC_FAILED statuses (high confidence) say.
 */
const char *
od_event_title(const od_event *ev)
{
	if (ev->confidence != OD_CONF_HIGH && ev->kind == OD_KIND_CUDNN)
		return "cuDNN error, usually out of memory (not confirmed)";
	if (ev->confidence != OD_CONF_HIGH && ev->kind == OD_KIND_CUBLAS)
		return "cuBLAS error, usually out of memory (not confirmed)";
	/* A SIGKILL and no more (the recognisers of low confidence: a
	 * shell's "Killed", exit status 137 or -9, a container's exit code
	 * 137 without its reason): the kill is shown, the memory is not. */
	if (ev->confidence == OD_CONF_LOW && ev->kind == OD_KIND_HOST_OOM_KILLER)
		return "Process killed by SIGKILL (out of memory not confirmed)";
	/* The kubelet's node-pressure eviction (recognisers.yaml,
	 * k8s-node-low-on-memory, medium): no OOM kill of the container. */
	if (ev->confidence == OD_CONF_MEDIUM &&
	    ev->kind == OD_KIND_K8S_OOMKILLED)
		return "Kubernetes pod evicted: the node was low on memory";
	if (ev->confidence == OD_CONF_LOW && ev->kind == OD_KIND_K8S_OOMKILLED)
		return "Kubernetes container killed, exit code 137 (out of "
		    "memory not confirmed)";
	return od_kind_title(ev->kind);
}

const char *
od_kind_framework(od_kind kind)
{
	return (unsigned)kind < OD_KIND_COUNT ? od_kinds[kind].framework : NULL;
}

const char *
od_device_word(const od_event *ev)
{
	const char *v;

	if (ev->kind == OD_KIND_NPU)
		return "NPU";
	if (ev->kind != OD_KIND_XLA)
		return "GPU";
	v = kn_vendor(ev);
	return v != NULL && strcmp(v, "google") == 0 ? "TPU" : "device";
}

const char *
od_confidence_name(od_confidence c)
{
	switch (c) {
	case OD_CONF_LOW:
		return "low";
	case OD_CONF_MEDIUM:
		return "medium";
	case OD_CONF_HIGH:
		break;
	}
	return "high";
}

const char *
od_layout_name(od_layout fmt)
{
	static const char *const names[OD_LAYOUT_COUNT] = {
		[OD_LAYOUT_UNKNOWN] = "unknown",
		[OD_LAYOUT_CACHED] = "cached",
		[OD_LAYOUT_RESERVED_TOTAL] = "reserved_in_total",
		[OD_LAYOUT_CAPACTY] = "capacty",
		[OD_LAYOUT_CAPACITY] = "capacity",
		[OD_LAYOUT_ASYNC] = "cuda_malloc_async",
		[OD_LAYOUT_WARNING] = "allocator_warning",
		[OD_LAYOUT_NVML_ASSERT] = "nvml_assert",
		[OD_LAYOUT_HEAD_ONLY] = "head_only",
		[OD_LAYOUT_OTHER_STACK] = "stack",
	};

	return (unsigned)fmt < OD_LAYOUT_COUNT ? names[fmt] : "unknown";
}

const char *
od_hint_name(od_hint hint)
{
	switch (hint) {
	case OD_HINT_MAX_SPLIT:
		return "max_split_size_mb";
	case OD_HINT_EXPANDABLE:
		return "expandable_segments";
	case OD_HINT_NONE:
		break;
	}
	return NULL;
}
