def test_dev(device):
    assert device.uri
def test_gpu(gpu_device):
    assert not gpu_device.is_cpu
