"""DPU Cluster Designer: plan GPU training clusters with DPUs and see what the design gives."""

__version__ = "0.1.0"
