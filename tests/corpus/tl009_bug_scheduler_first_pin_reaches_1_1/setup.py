from setuptools import find_packages, setup

setup(
    name="segtrainer",
    version="0.1",
    packages=find_packages(),
    install_requires=["numpy", "torch>=1.0,<1.2", "torchvision"],
)
