import unittest

from src.inventory import by_role, parse_line


class InventoryTest(unittest.TestCase):
    def test_parse(self):
        self.assertEqual(parse_line("web1 web prod eu"),
                         {"name": "web1", "role": "web", "tags": ["eu", "prod"]})
        self.assertIsNone(parse_line("  # comment"))

    def test_group(self):
        lines = ["db2 db", "web1 web", "db1 db", ""]
        self.assertEqual(by_role(lines), {"db": ["db1", "db2"], "web": ["web1"]})


if __name__ == "__main__":
    unittest.main()
