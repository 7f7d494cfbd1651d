import os


def load1():
    return os.getloadavg()[0]
